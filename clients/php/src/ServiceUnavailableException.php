<?php

declare(strict_types=1);

namespace IapFcgi;

/**
 * Still 503 after the retries Client may make (`retry_later`: Apple or the database unreachable), or a
 * Retry-After longer than Client waits. Nothing was delivered; the app should try again later.
 */
final class ServiceUnavailableException extends ClientException
{
    public function __construct(
        /** The last answer's Retry-After in seconds; null when it had none. */
        public readonly ?int $retryAfterSeconds,
        public readonly int $attempts,
    ) {
        parent::__construct(sprintf(
            'iap-fcgi answered 503 to %d attempt(s)%s',
            $attempts,
            $retryAfterSeconds === null ? '' : ", Retry-After $retryAfterSeconds s",
        ));
    }
}
