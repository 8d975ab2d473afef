<?php

declare(strict_types=1);

namespace IapFcgi;

/**
 * No answer: the connection failed or a timeout passed (curl's error number and message). A verify
 * may have been delivered meanwhile: verifying the same receipt again is safe (exactly once).
 */
final class TransportException extends ClientException
{
    public function __construct(public readonly int $curlError, string $message)
    {
        parent::__construct("iap-fcgi not reached: $message (curl error $curlError)");
    }

    public function isTimeout(): bool
    {
        return $this->curlError === CURLE_OPERATION_TIMEDOUT;
    }
}
