<?php

declare(strict_types=1);

namespace IapFcgi;

/**
 * The service refused the request: a 4xx (or another status the route does not answer with) and the
 * contract's error body, e.g. 404 `unknown_product`, 409 `order_user_mismatch`.
 */
final class ApiException extends ClientException
{
    public function __construct(
        public readonly int $httpStatus,
        /** The stable code of `{"error": {"code": ...}}`; `http_<status>` when the body had none. */
        public readonly string $errorCode,
        string $message,
    ) {
        parent::__construct("$httpStatus $errorCode: $message");
    }
}
