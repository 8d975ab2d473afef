<?php

declare(strict_types=1);

namespace IapFcgi;

/** One entry of a verify answer's `transactions`. */
final class VerifiedTransaction
{
    public function __construct(
        public readonly string $transactionId,
        public readonly string $originalTransactionId,
        public readonly string $productId,
        public readonly int $quantity,
        public readonly ?string $purchaseDate,
        public readonly ?string $cancellationDate,
        /** `delivered`, `already_delivered`, `refunded`, `rejected`. */
        public readonly string $state,
        public readonly ?string $orderId,
    ) {
    }

    /** @param array<string, mixed> $entry */
    public static function fromAnswer(array $entry): self
    {
        return new self(
            (string) $entry['transaction_id'], (string) $entry['original_transaction_id'],
            (string) $entry['product_id'], (int) $entry['quantity'], $entry['purchase_date'] ?? null,
            $entry['cancellation_date'] ?? null, (string) $entry['state'], $entry['order_id'] ?? null,
        );
    }
}
