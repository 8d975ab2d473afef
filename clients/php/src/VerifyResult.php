<?php

declare(strict_types=1);

namespace IapFcgi;

/**
 * The answer of POST /v1/receipts/verify, /v1/transactions/verify or /v1/google/purchases/verify (200
 * or 202). Tell the app to finish the transaction exactly when finishTransaction is true (for Google
 * Play: it may stop retrying; the service consumes or acknowledges).
 */
final class VerifyResult
{
    /** @param list<VerifiedTransaction> $transactions */
    public function __construct(
        /** `delivered`, `already_delivered`, `not_paid`, `rejected`, `pending`. */
        public readonly string $status,
        public readonly int $code,
        public readonly bool $finishTransaction,
        public readonly ?string $environment,
        /** Apple's verifyReceipt status; null when Apple was not asked. */
        public readonly ?int $appleStatus,
        public readonly ?string $orderId,
        public readonly array $transactions,
        /** `app_store`, or `google_play` for a Google Play purchase. */
        public readonly string $store = 'app_store',
    ) {
    }

    public function isDelivered(): bool
    {
        return $this->status === 'delivered';
    }

    /** @param array<string, mixed> $body */
    public static function fromAnswer(array $body): self
    {
        return new self(
            (string) $body['status'], (int) $body['code'], (bool) $body['finish_transaction'],
            $body['environment'] ?? null, isset($body['apple_status']) ? (int) $body['apple_status'] : null,
            $body['order_id'] ?? null,
            array_map([VerifiedTransaction::class, 'fromAnswer'], $body['transactions'] ?? []),
            is_string($body['store'] ?? null) ? $body['store'] : 'app_store',
        );
    }
}
