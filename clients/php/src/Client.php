<?php

declare(strict_types=1);

namespace IapFcgi;

/**
 * Orders and verification for a PHP backend in front of iap-fcgi (docs/api.md: POST /v1/orders,
 * /v1/receipts/verify, /v1/transactions/verify, /v1/google/purchases/verify), over the curl extension.
 *
 * A 503 (`retry_later`) is sent again after its Retry-After, at most `maxRetries` times and only when
 * Retry-After is at most `maxRetryAfterSeconds`; then ServiceUnavailableException. Other non-2xx
 * answers are ApiException with the contract's error code; no answer is TransportException.
 */
final class Client
{
    /** Retry-After missing from a 503: wait this long before sending again. */
    private const DEFAULT_RETRY_AFTER_SECONDS = 1;

    private readonly string $baseUrl;

    /** @var \Closure(int): void */
    private readonly \Closure $sleep;

    /**
     * @param string $baseUrl the service through nginx, e.g. `http://127.0.0.1:8080`
     * @param float $connectTimeoutSeconds connecting, default 3 s
     * @param float $timeoutSeconds one whole request, default 20 s (above IAP_APPLE_TIMEOUT_MS's 15 s)
     * @param int $maxRetries 503s sent again, default 2
     * @param int $maxRetryAfterSeconds longest Retry-After waited for, default 10 s
     * @param (\Closure(int): void)|null $sleep waits that many seconds (default sleep())
     */
    public function __construct(
        string $baseUrl,
        private readonly float $connectTimeoutSeconds = 3.0,
        private readonly float $timeoutSeconds = 20.0,
        private readonly int $maxRetries = 2,
        private readonly int $maxRetryAfterSeconds = 10,
        ?\Closure $sleep = null,
    ) {
        if (preg_match('#\Ahttps?://#', $baseUrl) !== 1) {
            throw new \InvalidArgumentException('baseUrl must start with http:// or https://');
        }
        $this->baseUrl = rtrim($baseUrl, '/');
        $this->sleep = $sleep ?? static function (int $seconds): void {
            sleep($seconds);
        };
    }

    /** POST /v1/orders: an order to put in the payment (`price`, when given, must be the catalog's). */
    public function createOrder(string $userId, string $productId, ?string $price = null): Order
    {
        return Order::fromAnswer($this->post('/v1/orders', ['user_id' => $userId, 'product_id' => $productId, 'price' => $price]));
    }

    /** POST /v1/receipts/verify: `userId` is required when `orderId` is not given. */
    public function verifyReceipt(
        string $receiptData,
        ?string $userId = null,
        ?string $orderId = null,
        ?string $transactionId = null,
        ?string $appVersion = null,
    ): VerifyResult {
        return VerifyResult::fromAnswer($this->post('/v1/receipts/verify', [
            'receipt_data' => $receiptData, 'user_id' => $userId, 'order_id' => $orderId,
            'transaction_id' => $transactionId, 'app_version' => $appVersion,
        ]));
    }

    /**
     * POST /v1/transactions/verify: a StoreKit 2 JWS (`signedTransaction`), or a bare `transactionId`
     * that delivers only with proof (its appAccountToken names an order of `userId`).
     */
    public function verifyTransaction(
        ?string $signedTransaction = null,
        ?string $transactionId = null,
        ?string $userId = null,
        ?string $orderId = null,
        ?string $appVersion = null,
    ): VerifyResult {
        return VerifyResult::fromAnswer($this->post('/v1/transactions/verify', [
            'signed_transaction' => $signedTransaction, 'transaction_id' => $transactionId, 'user_id' => $userId,
            'order_id' => $orderId, 'app_version' => $appVersion,
        ]));
    }

    /**
     * POST /v1/google/purchases/verify: a Google Play purchase, read from Google by the service (the
     * answer's store is `google_play`). `userId` is required when `orderId` is not given; the app
     * passes the order id to the billing flow as obfuscatedAccountId. The service consumes or
     * acknowledges the purchase at Google: the app must not.
     */
    public function verifyGooglePurchase(
        string $packageName,
        string $productId,
        string $purchaseToken,
        ?string $userId = null,
        ?string $orderId = null,
        ?string $appVersion = null,
    ): VerifyResult {
        return VerifyResult::fromAnswer($this->post('/v1/google/purchases/verify', [
            'package_name' => $packageName, 'product_id' => $productId, 'purchase_token' => $purchaseToken,
            'user_id' => $userId, 'order_id' => $orderId, 'app_version' => $appVersion,
        ]));
    }

    /**
     * @param array<string, ?string> $fields null ones are left out
     * @return array<string, mixed> the 2xx answer's JSON
     */
    private function post(string $path, array $fields): array
    {
        $body = json_encode(array_filter($fields, static fn (?string $value): bool => $value !== null), JSON_THROW_ON_ERROR);
        for ($attempt = 1; ; $attempt++) {
            [$status, $headers, $answer] = $this->send($path, $body);
            if ($status !== 503) {
                return self::decode($status, $answer);
            }
            $retryAfter = self::retryAfterSeconds($headers['retry-after'] ?? null);
            $wait = $retryAfter ?? self::DEFAULT_RETRY_AFTER_SECONDS;
            if ($attempt > $this->maxRetries || $wait > $this->maxRetryAfterSeconds) {
                throw new ServiceUnavailableException($retryAfter, $attempt);
            }
            ($this->sleep)($wait);
        }
    }

    /** @return array{int, array<string, string>, string} status, headers (lowercase names), body */
    private function send(string $path, string $body): array
    {
        $headers = [];
        $curl = curl_init($this->baseUrl . $path);
        curl_setopt_array($curl, [
            CURLOPT_POST => true,
            CURLOPT_POSTFIELDS => $body,
            CURLOPT_HTTPHEADER => ['Content-Type: application/json', 'Accept: application/json'],
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_CONNECTTIMEOUT_MS => (int) ($this->connectTimeoutSeconds * 1000),
            CURLOPT_TIMEOUT_MS => (int) ($this->timeoutSeconds * 1000),
            CURLOPT_PROTOCOLS => CURLPROTO_HTTP | CURLPROTO_HTTPS,
            CURLOPT_FOLLOWLOCATION => false,
            CURLOPT_HEADERFUNCTION => static function ($handle, string $line) use (&$headers): int {
                [$name, $value] = array_pad(explode(':', $line, 2), 2, null);
                if ($value !== null) {
                    $headers[strtolower(trim($name))] = trim($value);
                }
                return strlen($line);
            },
        ]);
        try {
            $answer = curl_exec($curl);
            if ($answer === false) {
                throw new TransportException(curl_errno($curl), curl_error($curl));
            }
            return [curl_getinfo($curl, CURLINFO_RESPONSE_CODE), $headers, $answer];
        } finally {
            curl_close($curl);
        }
    }

    /** @return array<string, mixed> */
    private static function decode(int $status, string $answer): array
    {
        $document = json_decode($answer, true);
        if ($status >= 200 && $status < 300) {
            if (!is_array($document)) {
                throw new ClientException("iap-fcgi answered $status with a body that is not a JSON object");
            }
            return $document;
        }
        $error = is_array($document) && is_array($document['error'] ?? null) ? $document['error'] : [];
        throw new ApiException(
            $status,
            is_string($error['code'] ?? null) ? $error['code'] : "http_$status",
            is_string($error['message'] ?? null) ? $error['message'] : 'no error body',
        );
    }

    /** Retry-After as seconds from now: delay-seconds or an HTTP-date; null when absent or unreadable. */
    private static function retryAfterSeconds(?string $value): ?int
    {
        if ($value === null || $value === '') {
            return null;
        }
        if (ctype_digit($value)) {
            return (int) $value;
        }
        $date = strtotime($value);
        return $date === false ? null : max(0, $date - time());
    }
}
