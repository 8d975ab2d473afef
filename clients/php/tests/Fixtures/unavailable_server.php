<?php

declare(strict_types=1);

// A router for `php -S` standing in front of the service for ClientTest. The first path segment says
// what it does; every request is logged (one line with its path) to $UNAVAILABLE_LOG:
//   /once/...   503 with Retry-After: 1 the first time, then passes the request on to $IAP_BASE_URL
//   /always/... 503 with Retry-After: 1
//   /long/...   503 with Retry-After: 3600
//   /slow/...   answers after 3 s
$log = (string) getenv('UNAVAILABLE_LOG');
$path = (string) parse_url($_SERVER['REQUEST_URI'], PHP_URL_PATH);
[, $mode, $rest] = array_pad(explode('/', $path, 3), 3, '');
$earlier = is_file($log) ? count(preg_grep("#^/$mode/#", file($log, FILE_IGNORE_NEW_LINES))) : 0;
file_put_contents($log, "$path\n", FILE_APPEND | LOCK_EX);

$unavailable = static function (string $retryAfter): void {
    http_response_code(503);
    header("Retry-After: $retryAfter");
    header('Content-Type: application/json');
    echo '{"status": "retry_later", "code": 4, "finish_transaction": false}';
};

match (true) {
    $mode === 'once' && $earlier === 0, $mode === 'always' => $unavailable('1'),
    $mode === 'long' => $unavailable('3600'),
    $mode === 'slow' => sleep(3) ?: print('{}'),
    $mode === 'once' => (static function () use ($rest): void {
        $curl = curl_init(getenv('IAP_BASE_URL') . "/$rest");
        curl_setopt_array($curl, [CURLOPT_POST => true, CURLOPT_POSTFIELDS => file_get_contents('php://input'), CURLOPT_RETURNTRANSFER => true]);
        $body = curl_exec($curl);
        http_response_code(curl_getinfo($curl, CURLINFO_RESPONSE_CODE));
        header('Content-Type: application/json');
        echo $body;
    })(),
};
