<?php

declare(strict_types=1);

namespace IapFcgi;

/**
 * What a `subscription_changed` event carries: the chain's state after the change. Whether the player
 * may use the subscription now is the `entitlements` view's answer (Entitlements), which stays right
 * as time passes without an event.
 */
final class Subscription
{
    /**
     * @param string $status active, grace_period, billing_retry, expired or revoked
     * @param string|null $expiresAt ISO 8601 UTC, the chain's expiry after the change; null when none is known
     * @param bool|null $autoRenew whether the chain renews at its expiry; null while the store has not said
     * @param string $originalTransactionId the chain: the original transaction id every period shares
     */
    public function __construct(
        public readonly string $status,
        public readonly ?string $expiresAt,
        public readonly ?bool $autoRenew,
        public readonly string $originalTransactionId,
    ) {
    }
}
