<?php

declare(strict_types=1);

namespace IapFcgi;

/** The 201 answer of POST /v1/orders. Put orderId in applicationUsername / appAccountToken. */
final class Order
{
    public function __construct(
        public readonly string $orderId,
        public readonly string $userId,
        public readonly string $productId,
        /** As the catalog has it, e.g. `6.00`. */
        public readonly string $price,
        public readonly string $currency,
        public readonly string $status,
        public readonly string $createdAt,
    ) {
    }

    /** @param array<string, mixed> $body */
    public static function fromAnswer(array $body): self
    {
        return new self(
            (string) $body['order_id'], (string) $body['user_id'], (string) $body['product_id'],
            (string) $body['price'], (string) $body['currency'], (string) $body['status'], (string) $body['created_at'],
        );
    }
}
