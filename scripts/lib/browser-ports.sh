# shellcheck shell=bash
# Ports a browser refuses to open (ERR_UNSAFE_PORT in Chromium, "This address is restricted" in Firefox),
# and the support console's HTTPS port chosen around them. Sourced by scripts/stack; pure functions, no I/O.

# The union of Chromium's restricted ports (net/base/port_util.cc, kRestrictedPorts) and Firefox's bad
# ports (netwerk/base/nsIOService.cpp, gBadPortList): Firefox's is the Fetch standard's "bad port" list,
# Chromium's the same but for 4190 and 6679.
BROWSER_BLOCKED_PORTS=(1 7 9 11 13 15 17 19 20 21 22 23 25 37 42 43 53 69 77 79 87 95 101 102 103 104 109 110
    111 113 115 117 119 123 135 137 139 143 161 179 389 427 465 512 513 514 515 526 530 531 532 540 548 554
    556 563 587 601 636 989 990 993 995 1719 1720 1723 2049 3659 4045 4190 5060 5061 6000 6566 6665 6666
    6667 6668 6669 6679 6697 10080)

declare -A BROWSER_BLOCKS_PORT=()
for _port in "${BROWSER_BLOCKED_PORTS[@]}"; do BROWSER_BLOCKS_PORT[$_port]=1; done
unset _port

# browser_blocks_port PORT: status 0 when a browser refuses PORT.
browser_blocks_port() { [ -n "${BROWSER_BLOCKS_PORT[$1]:-}" ]; }

# console_https_port HTTP_PORT: the console's HTTPS port for a stack on HTTP_PORT: HTTP_PORT + 2000, or
# the next port above it that no browser refuses (the local run's 8080 gives 10081, not 10080). Prints
# nothing and returns 1 when that passes 65535.
console_https_port() {
    local port=$(($1 + 2000))
    while browser_blocks_port "$port"; do port=$((port + 1)); done
    [ "$port" -le 65535 ] || return 1
    echo "$port"
}
