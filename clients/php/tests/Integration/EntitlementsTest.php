<?php

declare(strict_types=1);

namespace IapFcgi\Tests\Integration;

use IapFcgi\Entitlement;
use IapFcgi\Entitlements;
use IapFcgi\Tests\Stack;
use PDO;
use PHPUnit\Framework\TestCase;

/**
 * Entitlements against the stack's `entitlements` view, over chains written in `subscriptions` as the
 * service keeps them: active, past its expiry with no notification, in a grace period that outlasts its
 * expiry, in billing retry, and another player's.
 */
final class EntitlementsTest extends TestCase
{
    private PDO $pdo;
    private string $player;
    private string $other;
    /** @var list<string> */
    private array $chains = [];

    protected function setUp(): void
    {
        $this->pdo = Stack::pdo();
        $this->player = Stack::newUserId();
        $this->other = Stack::newUserId();
    }

    protected function tearDown(): void
    {
        if ($this->chains !== []) {
            $this->pdo->prepare('DELETE FROM subscriptions WHERE original_transaction_id IN (' . implode(', ', array_fill(0, count($this->chains), '?')) . ')')
                ->execute($this->chains);
        }
    }

    /** A chain of the user, its dates in seconds from now (the database's clock). Returns its original id. */
    private function chain(string $userId, string $productId, string $status, int $expiresIn, ?int $graceEndsIn = null): string
    {
        $originalId = '7' . random_int(100000000000000, 999999999999999);
        $this->pdo->prepare(<<<'SQL'
            INSERT INTO subscriptions (original_transaction_id, store, user_id, product_id, environment, status, expires_at,
              grace_period_expires_at, auto_renew, latest_transaction_id, latest_purchase_at, created_at, updated_at)
            VALUES (?, 'app_store', ?, ?, 'Production', ?, UTC_TIMESTAMP(3) + INTERVAL ? SECOND,
              IF(? IS NULL, NULL, UTC_TIMESTAMP(3) + INTERVAL ? SECOND), 1, ?, UTC_TIMESTAMP(3) - INTERVAL 1 DAY,
              UTC_TIMESTAMP(3), UTC_TIMESTAMP(3))
            SQL)->execute([$originalId, $userId, $productId, $status, $expiresIn, $graceEndsIn, $graceEndsIn, $originalId]);
        $this->chains[] = $originalId;
        return $originalId;
    }

    private function expiryOf(string $originalId, string $column): string
    {
        $read = $this->pdo->prepare("SELECT DATE_FORMAT($column, '%Y-%m-%dT%H:%i:%sZ') FROM subscriptions WHERE original_transaction_id = ?");
        $read->execute([$originalId]);
        return (string) $read->fetchColumn();
    }

    public function testAPlayerIsEntitledToWhatIsInForceNow(): void
    {
        $monthly = $this->chain($this->player, 'vip_monthly', 'active', 3600);
        $this->chain($this->player, 'vip_weekly', 'active', -60);             // lapsed: no EXPIRED arrived yet
        $yearly = $this->chain($this->player, 'vip_yearly', 'grace_period', -3600, 86400);
        $this->chain($this->player, 'vip_season', 'billing_retry', 3600);
        $this->chain($this->other, 'vip_season', 'active', 3600);

        $entitlements = new Entitlements();
        $asked = [];
        foreach (['vip_monthly', 'vip_weekly', 'vip_yearly', 'vip_season', 'vip_never_bought'] as $product) {
            $asked[$product] = $entitlements->isEntitled($this->pdo, $this->player, $product);
        }
        self::assertSame(['vip_monthly' => true, 'vip_weekly' => false, 'vip_yearly' => true, 'vip_season' => false,
            'vip_never_bought' => false], $asked);
        self::assertTrue($entitlements->isEntitled($this->pdo, $this->other, 'vip_season'));

        $held = array_map(static fn (Entitlement $e): array => [$e->userId, $e->productId, $e->originalTransactionId, $e->status, $e->entitledUntil],
            $entitlements->of($this->pdo, $this->player));
        self::assertSame([
            [$this->player, 'vip_monthly', $monthly, 'active', $this->expiryOf($monthly, 'expires_at')],
            [$this->player, 'vip_yearly', $yearly, 'grace_period', $this->expiryOf($yearly, 'grace_period_expires_at')],
        ], $held);
        self::assertSame([], $entitlements->of($this->pdo, Stack::newUserId()));
    }

    public function testTimePassingEndsAnEntitlementWithoutAnyChange(): void
    {
        $this->chain($this->player, 'vip_monthly', 'active', 2);
        $entitlements = new Entitlements();
        self::assertTrue($entitlements->isEntitled($this->pdo, $this->player, 'vip_monthly'));
        Stack::waitUntil(fn (): bool => !$entitlements->isEntitled($this->pdo, $this->player, 'vip_monthly'), 10,
            'the chain past its expiry');
        self::assertSame([], $entitlements->of($this->pdo, $this->player));
    }
}
