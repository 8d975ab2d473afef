<?php

declare(strict_types=1);

namespace IapFcgi;

/**
 * A webhook POST that must not be trusted. `reason` is a stable code for logs and metrics; answer
 * any of them with a non-2xx status (401), and iap-fcgi sends the event again later.
 */
final class WebhookException extends \RuntimeException
{
    public const MISSING_SIGNATURE = 'missing_signature';
    public const MALFORMED_SIGNATURE = 'malformed_signature';
    public const SIGNATURE_MISMATCH = 'signature_mismatch';
    public const TIMESTAMP_OUTSIDE_TOLERANCE = 'timestamp_outside_tolerance';
    public const INVALID_BODY = 'invalid_body';

    public function __construct(public readonly string $reason, string $message)
    {
        parent::__construct($message);
    }
}
