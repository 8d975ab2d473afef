<?php

declare(strict_types=1);

namespace IapFcgi;

use PDO;

/**
 * What each player may use now, read from iap-fcgi's view `entitlements` (docs/events.md
 * "Subscriptions"): a subscription chain while it is active or in its grace period and its expiry (or
 * the grace period's end) is in the future. The view reads the database's clock, so a chain past its
 * expiry is not entitled even before the store says it expired: ask it when the player uses the
 * subscription rather than keeping the answer.
 *
 * The game's account needs SELECT on `entitlements`.
 */
final class Entitlements
{
    private const ENTITLED = 'SELECT 1 FROM entitlements WHERE user_id = ? AND product_id = ? LIMIT 1';

    private const OF_USER = <<<'SQL'
        SELECT user_id, product_id, original_transaction_id, status,
               DATE_FORMAT(entitled_until, '%Y-%m-%dT%H:%i:%sZ') AS entitled_until
        FROM entitlements WHERE user_id = ? ORDER BY product_id, entitled_until DESC, original_transaction_id
        SQL;

    /** Whether the player may use the subscription product now. */
    public function isEntitled(PDO $pdo, string $userId, string $productId): bool
    {
        $read = $pdo->prepare(self::ENTITLED);
        $read->execute([$userId, $productId]);
        return $read->fetchColumn() !== false;
    }

    /**
     * The player's subscriptions in force now, by product (a product bought twice, as two chains, has
     * a row for each, the one that lasts longest first).
     *
     * @return list<Entitlement>
     */
    public function of(PDO $pdo, string $userId): array
    {
        $read = $pdo->prepare(self::OF_USER);
        $read->execute([$userId]);
        return array_map(static fn (array $row): Entitlement => new Entitlement(
            (string) $row['user_id'],
            (string) $row['product_id'],
            (string) $row['original_transaction_id'],
            (string) $row['status'],
            (string) $row['entitled_until'],
        ), $read->fetchAll(PDO::FETCH_ASSOC));
    }
}
