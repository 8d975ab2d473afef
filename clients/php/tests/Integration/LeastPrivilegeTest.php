<?php

declare(strict_types=1);

namespace IapFcgi\Tests\Integration;

use IapFcgi\Client;
use IapFcgi\ConsumptionReporter;
use IapFcgi\Entitlements;
use IapFcgi\Event;
use IapFcgi\EventConsumer;
use IapFcgi\EventType;
use IapFcgi\Tests\Stack;
use PDO;
use PHPUnit\Framework\TestCase;

/**
 * The game's account with exactly the grants README.md documents (its GRANT statements, read from the
 * README, for a MariaDB user of this test's own), and every database method of the library run as it.
 */
final class LeastPrivilegeTest extends TestCase
{
    private const README = __DIR__ . '/../../README.md';

    private PDO $root;
    private string $account;
    private PDO $game;

    /**
     * README's `GRANT ... ON iap.<table> TO 'game'@'localhost';` lines, for the stack's database and
     * the given account.
     *
     * @return list<string>
     */
    private static function documentedGrants(string $database, string $account): array
    {
        preg_match_all("/^GRANT [A-Za-z, ()_]+ ON iap\\.[a-z_]+ TO 'game'@'localhost';$/m", (string) file_get_contents(self::README), $grants);
        return array_map(static fn (string $grant): string => str_replace([' ON iap.', "'game'@'localhost'"], [" ON `$database`.", $account], $grant),
            $grants[0]);
    }

    protected function setUp(): void
    {
        $service = Stack::pdo();
        Stack::createGameTables($service);
        $service->exec('UPDATE events SET consumed_at = UTC_TIMESTAMP(3) WHERE consumed_at IS NULL');

        $this->root = Stack::rootPdo();
        $user = 'iap_php_' . bin2hex(random_bytes(4));
        $password = bin2hex(random_bytes(12));
        $this->account = "'$user'@'127.0.0.1'";
        $this->root->exec("CREATE USER $this->account IDENTIFIED BY '$password'");
        $database = Stack::env('IAP_DB_NAME');
        $grants = self::documentedGrants($database, $this->account);
        self::assertGreaterThanOrEqual(6, count($grants), 'the README\'s GRANT statements were found');
        foreach ($grants as $grant) {
            $this->root->exec($grant);
        }
        // The game's own table, where the grant below writes the goods.
        $this->root->exec("GRANT INSERT ON `$database`.php_game_inventory TO $this->account");
        $this->game = Stack::pdoAs($user, $password);
    }

    protected function tearDown(): void
    {
        $this->root->exec("DROP USER IF EXISTS $this->account");
    }

    public function testEveryMethodWorksWithTheDocumentedGrants(): void
    {
        $denied = [];
        $attempt = static function (string $method, \Closure $call) use (&$denied): mixed {
            try {
                return $call();
            } catch (\PDOException $error) {
                $denied[] = "$method: " . $error->getMessage();
                return null;
            }
        };

        $reporter = new ConsumptionReporter();
        $userId = Stack::newUserId();
        $transactionId = '1000000' . random_int(100000000, 999999999);
        $event = new Event(1, EventType::RefundRequested, '2026-11-28T08:00:00Z', 'Production', $transactionId, $transactionId,
            'order-1', $userId, Stack::PAY_6, 1);
        $attempt('recordConsent', fn () => $reporter->recordConsent($this->game, $userId));
        $consented = $attempt('hasConsent', fn (): bool => $reporter->hasConsent($this->game, $userId));
        $withdrawn = $attempt('withdrawConsent', fn (): bool => $reporter->withdrawConsent($this->game, $userId));
        $attempt('recordConsumption', fn () => $reporter->recordConsumption($this->game, $transactionId, 40000));
        $consumption = $attempt('consumption', fn (): ?int => $reporter->consumption($this->game, $transactionId));
        $answer = $attempt('answerFromRecord', fn (): ?string => $reporter->answerFromRecord($this->game, $event));

        $player = Stack::newUserId();
        self::assertTrue((new Client(Stack::baseUrl()))->verifyReceipt(Stack::appReceipt(Stack::PAY_6, 'zydj.product.pay_30')['receipt_data'],
            userId: $player)->isDelivered());
        [$first, $second] = Stack::eventsOf(Stack::pdo(), $player);
        $addGoods = Stack::addGoods(...);
        $consumer = new EventConsumer();
        $attempt('EventConsumer::consumeEvent, a grant that throws', function () use ($consumer, $first): void {
            try {
                $consumer->consumeEvent($this->game, $first, static function (): void {
                    throw new \DomainException('inventory down');
                });
            } catch (\DomainException) {
            }
        });
        $pushed = $attempt('EventConsumer::consumeEvent', fn (): bool => $consumer->consumeEvent($this->game, $first, $addGoods));
        $pulled = $attempt('EventConsumer::consume', fn (): int => $consumer->consume($this->game, $addGoods));
        $entitlements = new Entitlements();
        $entitled = $attempt('Entitlements::isEntitled', fn (): bool => $entitlements->isEntitled($this->game, $player, 'vip_monthly'));
        $held = $attempt('Entitlements::of', fn (): array => $entitlements->of($this->game, $player));

        self::assertSame([], $denied);
        self::assertSame([true, true, 40000, '{"consumption_percentage":40000}'], [$consented, $withdrawn, $consumption, $answer]);
        self::assertSame([true, 1], [$pushed, $pulled]);
        self::assertSame([false, []], [$entitled, $held]);
        self::assertSame(2, (int) Stack::pdo()->query("SELECT COUNT(*) FROM php_game_inventory WHERE event_id IN ($first->eventId, $second->eventId)")->fetchColumn());
    }
}
