<?php

declare(strict_types=1);

namespace IapFcgi;

/** One row of the `entitlements` view: a subscription chain the player may use now. */
final class Entitlement
{
    /**
     * @param string $status active, or grace_period (a renewal failed; still entitled until entitledUntil)
     * @param string $entitledUntil ISO 8601 UTC: the expiry, or the grace period's end
     */
    public function __construct(
        public readonly string $userId,
        public readonly string $productId,
        public readonly string $originalTransactionId,
        public readonly string $status,
        public readonly string $entitledUntil,
    ) {
    }
}
