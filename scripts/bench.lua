-- wrk script of scripts/bench. Environment:
--   BENCH_METHOD  GET (default) or POST      BENCH_BODY    one body for every request
--   BENCH_BODIES  a file with one body a line, each sent once in turn (each thread its own share)
--   BENCH_PREFORMAT=1  format the BENCH_BODIES requests before the run (see below)
-- done() prints: RESULT rps=... p50_ms=... p99_ms=... requests=... errors=... wraps=...
local method = os.getenv("BENCH_METHOD") or "GET"
local headers = { ["Content-Type"] = "application/json" }
local bodies, count = {}, 0
local file = os.getenv("BENCH_BODIES")
if file and file ~= "" then
  for line in io.lines(file) do count = count + 1; bodies[count] = line end
end

local threads, next_id = {}, 0
function setup(thread)
  thread:set("id", next_id)
  next_id = next_id + 1
  threads[#threads + 1] = thread
end

if count > 0 then
  -- BENCH_PREFORMAT=1: every request is formatted before the run, in init(), so that the run measures the
  -- service, not wrk formatting 5 KB requests on the same two cores (case d sends one body, formatted
  -- once). Costs memory: the bodies twice, per thread.
  local preformatted = os.getenv("BENCH_PREFORMAT") == "1"
  local requests = {}
  function init(args)
    position, wraps = id, 0
    for index = 1, preformatted and count or 0 do requests[index] = wrk.format(method, nil, headers, bodies[index]) end
  end

  function request()
    -- wrk also calls request() once on its main state, where init() never ran.
    if position == nil then position, wraps = 0, 0 end
    position = position + (tonumber(os.getenv("BENCH_THREADS")) or 1)
    if position > count then position, wraps = (position % count) + 1, wraps + 1 end
    return requests[position] or wrk.format(method, nil, headers, bodies[position])
  end
else
  wrk.method, wrk.body = method, os.getenv("BENCH_BODY")
  if wrk.body then wrk.headers["Content-Type"] = "application/json" end
end

function done(summary, latency, requests)
  local wrapped = 0
  for _, t in ipairs(threads) do wrapped = wrapped + (t:get("wraps") or 0) end
  local e = summary.errors
  io.write(string.format("RESULT rps=%.1f p50_ms=%.2f p99_ms=%.2f requests=%d errors=%d wraps=%d\n",
    summary.requests / (summary.duration / 1e6), latency:percentile(50) / 1000, latency:percentile(99) / 1000,
    summary.requests, e.status + e.connect + e.read + e.write + e.timeout, wrapped))
end
