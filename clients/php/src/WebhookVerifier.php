<?php

declare(strict_types=1);

namespace IapFcgi;

/**
 * Checks a webhook POST from iap-fcgi and decodes its event (docs/events.md "Push: the webhook").
 *
 * The header is `X-IAP-Signature: t=<unix seconds>,v1=<hex HMAC-SHA256 of "<t>.<body>">`, keyed with
 * IAP_WEBHOOK_SECRET. The time is inside the signed text, so a POST recorded by someone and replayed
 * later is refused once it is older than the tolerance.
 */
final class WebhookVerifier
{
    /** iap-fcgi refuses a shorter IAP_WEBHOOK_SECRET, so a shorter one here is a mistake, not a secret. */
    public const MIN_SECRET_LENGTH = 16;

    /** @var list<string> */
    private array $secrets;

    /**
     * @param string|list<string> $secrets the webhook secret; during a rotation the new and the old
     *        one (a POST signed with any of them passes)
     * @param int $toleranceSeconds how far `t` may be from now, either way (default 300 s)
     * @param (\Closure(): int)|null $clock unix seconds now (default time())
     * @throws \InvalidArgumentException naming the unusable secret and the likely cause
     */
    public function __construct(
        string|array $secrets,
        private readonly int $toleranceSeconds = 300,
        private readonly ?\Closure $clock = null,
    ) {
        $this->secrets = self::usableSecrets(is_string($secrets) ? [$secrets] : array_values($secrets));
        if ($toleranceSeconds < 1) {
            throw new \InvalidArgumentException('toleranceSeconds must be at least 1');
        }
    }

    /**
     * The secrets as given, or an exception at once: a secret that is not there (getenv() gives false
     * when PHP does not see the variable, a cached framework configuration gives null) would otherwise
     * fail every POST, and iap-fcgi would send each one again for 72 hours.
     *
     * @param list<mixed> $secrets
     * @return list<string>
     */
    private static function usableSecrets(array $secrets): array
    {
        if ($secrets === []) {
            throw new \InvalidArgumentException('WebhookVerifier got no secret: pass IAP_WEBHOOK_SECRET (and the old one during a rotation)');
        }
        foreach ($secrets as $index => $secret) {
            $which = sprintf('WebhookVerifier: secret %d of %d', $index + 1, count($secrets));
            $problem = match (true) {
                $secret === false => 'is false, what getenv() gives for a variable PHP does not see: php-fpm clears the '
                    . 'environment (clear_env = yes) unless the pool passes it (env[IAP_WEBHOOK_SECRET] = ...); '
                    . 'better, read it from the framework\'s configuration',
                $secret === null => 'is null: the variable or configuration key is not set (Laravel\'s env() gives null '
                    . 'outside config/ once the configuration is cached: read config(\'services.iap.webhook_secret\') instead)',
                !is_string($secret) => 'is of type ' . get_debug_type($secret) . ', not a string',
                $secret === '' => 'is empty',
                strlen($secret) < self::MIN_SECRET_LENGTH => sprintf('has %d characters: iap-fcgi requires at least %d',
                    strlen($secret), self::MIN_SECRET_LENGTH),
                default => null,
            };
            if ($problem !== null) {
                throw new \InvalidArgumentException("$which $problem");
            }
        }
        return $secrets;
    }

    /**
     * The event of a POST whose signature holds, from the raw body (file_get_contents('php://input'),
     * never a re-encoded json_decode) and the header's value ($_SERVER['HTTP_X_IAP_SIGNATURE']).
     *
     * @throws WebhookException
     */
    public function verify(string $body, ?string $signatureHeader): Event
    {
        $this->checkSignature($body, $signatureHeader);
        try {
            $document = json_decode($body, true, 16, JSON_THROW_ON_ERROR | JSON_BIGINT_AS_STRING);
        } catch (\JsonException $error) {
            throw new WebhookException(WebhookException::INVALID_BODY, 'the body is not JSON: ' . $error->getMessage());
        }
        if (!is_array($document)) {
            throw new WebhookException(WebhookException::INVALID_BODY, 'the body is not a JSON object');
        }
        try {
            return Event::fromWebhookBody($document);
        } catch (\UnexpectedValueException $error) {
            throw new WebhookException(WebhookException::INVALID_BODY, $error->getMessage());
        }
    }

    /** @throws WebhookException */
    public function checkSignature(string $body, ?string $signatureHeader): void
    {
        if ($signatureHeader === null || trim($signatureHeader) === '') {
            throw new WebhookException(WebhookException::MISSING_SIGNATURE, 'no X-IAP-Signature header');
        }
        [$timestamp, $signatures] = self::parseHeader($signatureHeader);
        $now = $this->clock === null ? time() : ($this->clock)();
        if (abs($now - $timestamp) > $this->toleranceSeconds) {
            throw new WebhookException(
                WebhookException::TIMESTAMP_OUTSIDE_TOLERANCE,
                sprintf('signed at %d, %d s from now (tolerance %d s)', $timestamp, $now - $timestamp, $this->toleranceSeconds),
            );
        }
        foreach ($this->secrets as $secret) {
            $expected = hash_hmac('sha256', $timestamp . '.' . $body, $secret);
            foreach ($signatures as $signature) {
                if (hash_equals($expected, $signature)) {
                    return;
                }
            }
        }
        throw new WebhookException(WebhookException::SIGNATURE_MISMATCH, 'no v1 signature matches the body with any secret');
    }

    /**
     * `t` and every `v1` of the header (a later scheme may add other keys, which are ignored).
     *
     * @return array{int, list<string>}
     * @throws WebhookException
     */
    private static function parseHeader(string $header): array
    {
        $timestamp = null;
        $signatures = [];
        foreach (explode(',', $header) as $part) {
            [$key, $value] = array_pad(explode('=', trim($part), 2), 2, '');
            if ($key === 't') {
                if (preg_match('/\A[0-9]{1,12}\z/', $value) !== 1) {
                    throw new WebhookException(WebhookException::MALFORMED_SIGNATURE, 't is not a unix time');
                }
                $timestamp = (int) $value;
            } elseif ($key === 'v1') {
                $signatures[] = strtolower($value);
            }
        }
        if ($timestamp === null || $signatures === []) {
            throw new WebhookException(WebhookException::MALFORMED_SIGNATURE, 'X-IAP-Signature needs t= and v1=');
        }
        return [$timestamp, $signatures];
    }
}
