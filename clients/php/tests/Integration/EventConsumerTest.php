<?php

declare(strict_types=1);

namespace IapFcgi\Tests\Integration;

use IapFcgi\Client;
use IapFcgi\EventConsumer;
use IapFcgi\Grant;
use IapFcgi\GrantAction;
use IapFcgi\Tests\Stack;
use PDO;
use PHPUnit\Framework\TestCase;

/**
 * Exactly once against the stack's MariaDB, on events the real service wrote: a user's purchase
 * verified through nginx. Earlier events of the stack are marked consumed first, as a game that has
 * caught up, so that a pull sees only this test's.
 */
final class EventConsumerTest extends TestCase
{
    private PDO $pdo;
    private EventConsumer $consumer;

    protected function setUp(): void
    {
        $this->pdo = Stack::pdo();
        $this->pdo->exec('UPDATE events SET consumed_at = UTC_TIMESTAMP(3) WHERE consumed_at IS NULL');
        $this->consumer = new EventConsumer();
    }

    /** A user with one delivered purchase per product, verified through the service; returns the user. */
    private static function deliveredUser(string ...$products): string
    {
        $userId = Stack::newUserId();
        $answer = (new Client(Stack::baseUrl()))->verifyReceipt(Stack::appReceipt(...$products)['receipt_data'], userId: $userId);
        self::assertSame('delivered', $answer->status);
        return $userId;
    }

    /** @return list<int> */
    private static function ids(array $events): array
    {
        return array_map(static fn ($event): int => $event->eventId, $events);
    }

    public function testPullGrantsEachEventOnceInOrderAndAReplayGrantsNothing(): void
    {
        $userId = self::deliveredUser(Stack::PAY_6, 'zydj.product.pay_30');
        $events = Stack::eventsOf($this->pdo, $userId);
        self::assertCount(2, $events);

        $granted = [];
        $record = static function (Grant $grant, PDO $pdo) use (&$granted): void {
            self::assertTrue($pdo->inTransaction(), 'the grant runs inside the claiming transaction');
            $granted[] = [$grant->event->eventId, $grant->action, $grant->shareMilli, $grant->event->userId, $grant->event->productId];
        };
        self::assertSame(2, $this->consumer->consume($this->pdo, $record));
        self::assertSame([
            [$events[0]->eventId, GrantAction::Grant, 100000, $userId, Stack::PAY_6],
            [$events[1]->eventId, GrantAction::Grant, 100000, $userId, 'zydj.product.pay_30'],
        ], $granted);

        self::assertSame(0, $this->consumer->consume($this->pdo, $record), 'a second pull');
        self::assertFalse($this->consumer->consumeEvent($this->pdo, $events[0], $record), 'the same event pushed again');
        self::assertCount(2, $granted);
    }

    public function testAFailedGrantLeavesTheEventForTheNextRun(): void
    {
        $userId = self::deliveredUser(Stack::PAY_6);
        [$event] = Stack::eventsOf($this->pdo, $userId);
        try {
            $this->consumer->consumeEvent($this->pdo, $event, static function (): void {
                throw new \DomainException('inventory down');
            });
            self::fail('the grant\'s exception must reach the caller');
        } catch (\DomainException) {
        }
        self::assertFalse($this->pdo->inTransaction());
        self::assertNull($this->pdo->query("SELECT consumed_at FROM events WHERE event_id = $event->eventId")->fetchColumn());

        $granted = [];
        self::assertSame(1, $this->consumer->consume($this->pdo, static function (Grant $grant) use (&$granted): void {
            $granted[] = $grant->event->eventId;
        }));
        self::assertSame([$event->eventId], $granted);
    }

    /**
     * Two consumers, two connections (the second in a process of its own), one event. The first claims
     * it and, inside its grant, waits until the second's UPDATE is queued behind its row lock (seen in
     * INNODB_TRX); then it commits. The second's UPDATE then changes no row: one grant.
     */
    public function testTwoConsumersRacingForOneEventGrantOnce(): void
    {
        $userId = self::deliveredUser(Stack::PAY_6);
        [$event] = Stack::eventsOf($this->pdo, $userId);
        $root = Stack::rootPdo();
        $second = null;
        $pipes = [];
        $granted = [];
        $errors = tempnam(sys_get_temp_dir(), 'iap-php-race-');

        $claimed = $this->consumer->consumeEvent($this->pdo, $event, static function (Grant $grant) use ($userId, $event, $root, $errors, &$second, &$pipes, &$granted): void {
            // Its errors go to a file, so that nothing it writes can block it; its first line is read by polling.
            $second = proc_open(['php', __DIR__ . '/../Fixtures/consume_one.php', $userId, (string) $event->eventId],
                [1 => ['pipe', 'w'], 2 => ['file', $errors, 'w']], $pipes);
            stream_set_blocking($pipes[1], false);
            $line = false;
            Stack::waitUntil(static function () use ($pipes, &$line): bool {
                return ($line = fgets($pipes[1])) !== false;
            }, 60, 'the second consumer\'s connection id');
            $connectionId = (int) $line;
            $waiting = $root->prepare("SELECT COUNT(*) FROM information_schema.INNODB_TRX WHERE trx_state = 'LOCK WAIT' AND trx_mysql_thread_id = ?");
            Stack::waitUntil(static function () use ($waiting, $connectionId): bool {
                $waiting->execute([$connectionId]);
                return (int) $waiting->fetchColumn() === 1;
            }, 60, 'the second consumer\'s UPDATE waiting for the first one\'s row lock');
            $granted[] = $grant->event->eventId;
        });

        stream_set_blocking($pipes[1], true);
        $output = stream_get_contents($pipes[1]);
        self::assertSame(0, proc_close($second), file_get_contents($errors));
        unlink($errors);
        self::assertTrue($claimed);
        self::assertSame([$event->eventId], $granted);
        self::assertSame("claimed=0\n", $output, 'the second consumer neither granted nor claimed');
    }
}
