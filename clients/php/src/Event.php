<?php

declare(strict_types=1);

namespace IapFcgi;

/**
 * One `events` row: from the webhook's body (push) or read from the table (pull). `eventId` is the
 * game's idempotency key. Times are ISO 8601 UTC (`2026-11-28T08:00:00Z`).
 */
final class Event
{
    /** The type; null when the service sent one this library does not know (see typeName). */
    public readonly ?EventType $type;

    /** `events.type` as the service wrote it, known to this library or not. */
    public readonly string $typeName;

    public function __construct(
        public readonly int $eventId,
        EventType|string $type,
        public readonly string $occurredAt,
        /** `Production` or `Sandbox`. */
        public readonly string $environment,
        public readonly string $transactionId,
        public readonly string $originalTransactionId,
        public readonly string $orderId,
        public readonly string $userId,
        public readonly string $productId,
        public readonly int $quantity,
        /** Apple's revocationReason (0, 1) of a refunded transaction; else null. */
        public readonly ?int $revocationReason = null,
        /** Apple's revocationType (REFUND_FULL, REFUND_PRORATED, FAMILY_REVOKE); else null. */
        public readonly ?string $revocationType = null,
        /** Share refunded, in milliunits (40000: 40 %); null: all of it, or not refunded. */
        public readonly ?int $revocationPercentage = null,
        /** Only for `refund_requested`. */
        public readonly ?RefundRequest $refundRequest = null,
        /** The store that sold it: `app_store` or `google_play`. */
        public readonly string $store = 'app_store',
        /**
         * A Google Play quantity-based partial refund: how many of `quantity` this refund took back (the
         * goods of the rest stay); null for any other event.
         */
        public readonly ?int $refundedQuantity = null,
        /** Only for `subscription_changed`: the chain's state after the change. */
        public readonly ?Subscription $subscription = null,
    ) {
        $this->type = $type instanceof EventType ? $type : EventType::tryFrom($type);
        $this->typeName = $type instanceof EventType ? $type->value : $type;
    }

    /**
     * The event of a webhook body (already JSON-decoded into arrays).
     *
     * @param array<mixed> $body
     * @throws \UnexpectedValueException naming the member that is missing or of the wrong type
     */
    public static function fromWebhookBody(array $body): self
    {
        $type = self::member($body, 'type', 'string');
        // A type this library does not know may come with other members: its id and type are what
        // EventConsumer needs to record and skip it (it reads the rest from `events`).
        $unknown = EventType::tryFrom($type) === null;
        $transaction = self::member($body, 'transaction', 'array', optional: $unknown) ?? [];
        $order = self::member($body, 'order', 'array', optional: $unknown) ?? [];
        $refundRequest = $body['refund_request'] ?? null;
        $subscription = $body['subscription'] ?? null;
        return new self(
            eventId: self::member($body, 'event_id', 'int'),
            type: $type,
            occurredAt: self::member($body, 'occurred_at', 'string', optional: $unknown) ?? '',
            environment: self::member($body, 'environment', 'string', optional: $unknown) ?? '',
            transactionId: self::member($transaction, 'transaction_id', 'string', optional: $unknown) ?? '',
            originalTransactionId: self::member($transaction, 'original_transaction_id', 'string', optional: $unknown) ?? '',
            orderId: self::member($order, 'order_id', 'string', optional: $unknown) ?? '',
            userId: self::member($order, 'user_id', 'string', optional: $unknown) ?? '',
            productId: self::member($transaction, 'product_id', 'string', optional: $unknown) ?? '',
            quantity: self::member($transaction, 'quantity', 'int', optional: $unknown) ?? 0,
            revocationReason: self::member($transaction, 'revocation_reason', 'int', optional: true),
            revocationType: self::member($transaction, 'revocation_type', 'string', optional: true),
            revocationPercentage: self::member($transaction, 'revocation_percentage', 'int', optional: true),
            refundRequest: is_array($refundRequest) ? new RefundRequest(
                self::member($refundRequest, 'reason', 'string', optional: true),
                self::member($refundRequest, 'deadline_at', 'string'),
            ) : null,
            store: self::member($body, 'store', 'string', optional: true) ?? 'app_store',
            refundedQuantity: self::member($transaction, 'refunded_quantity', 'int', optional: true),
            subscription: is_array($subscription) ? new Subscription(
                self::member($subscription, 'status', 'string'),
                self::member($subscription, 'expires_at', 'string', optional: true),
                self::member($subscription, 'auto_renew', 'bool', optional: true),
                self::member($subscription, 'original_transaction_id', 'string'),
            ) : null,
        );
    }

    /**
     * The event of a row of EventConsumer's query (`events` with its transaction's revocation and its
     * refund request; a subscription_changed row's chain is in its own columns).
     *
     * @param array<string, mixed> $row
     */
    public static function fromRow(array $row): self
    {
        $optionalInt = static fn (mixed $value): ?int => $value === null ? null : (int) $value;
        return new self(
            eventId: (int) $row['event_id'],
            type: (string) $row['type'],
            occurredAt: (string) $row['occurred_at'],
            environment: (string) $row['environment'],
            transactionId: (string) $row['transaction_id'],
            originalTransactionId: (string) $row['original_transaction_id'],
            orderId: (string) $row['order_id'],
            userId: (string) $row['user_id'],
            productId: (string) $row['product_id'],
            quantity: (int) $row['quantity'],
            revocationReason: $optionalInt($row['revocation_reason']),
            revocationType: $row['revocation_type'] === null ? null : (string) $row['revocation_type'],
            revocationPercentage: $optionalInt($row['revocation_percentage']),
            refundRequest: $row['refund_deadline_at'] === null ? null : new RefundRequest(
                $row['refund_reason'] === null ? null : (string) $row['refund_reason'],
                (string) $row['refund_deadline_at'],
            ),
            store: (string) $row['store'],
            refundedQuantity: $optionalInt($row['refunded_quantity']),
            subscription: $row['subscription_status'] === null ? null : new Subscription(
                (string) $row['subscription_status'],
                $row['expires_at'] === null ? null : (string) $row['expires_at'],
                $row['auto_renew'] === null ? null : (bool) (int) $row['auto_renew'],
                (string) $row['original_transaction_id'],
            ),
        );
    }

    /**
     * @param array<mixed> $document
     * @param 'int'|'string'|'bool'|'array' $type
     */
    private static function member(array $document, string $name, string $type, bool $optional = false): mixed
    {
        $value = $document[$name] ?? null;
        if ($value === null && $optional) {
            return null;
        }
        $matches = match ($type) {
            'int' => is_int($value),
            'string' => is_string($value),
            'bool' => is_bool($value),
            'array' => is_array($value),
        };
        if (!$matches) {
            throw new \UnexpectedValueException(
                $value === null ? "\"$name\" is missing" : "\"$name\" is not of type $type",
            );
        }
        return $value;
    }
}
