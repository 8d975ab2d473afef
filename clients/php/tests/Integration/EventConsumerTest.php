<?php

declare(strict_types=1);

namespace IapFcgi\Tests\Integration;

use IapFcgi\Client;
use IapFcgi\Event;
use IapFcgi\EventConsumer;
use IapFcgi\Grant;
use IapFcgi\GrantAction;
use IapFcgi\Tests\FrameworkTransactions;
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
        Stack::createGameTables($this->pdo);
        $this->pdo->exec('UPDATE events SET consumed_at = UTC_TIMESTAMP(3) WHERE consumed_at IS NULL');
        $this->consumer = new EventConsumer();
    }

    /** @return array<string, mixed>|false the library's record of an event it passed over */
    private function failureOf(int $eventId): array|false
    {
        $read = $this->pdo->prepare('SELECT kind, type, attempts, retry_at, last_error FROM iap_event_failures WHERE event_id = ?');
        $read->execute([$eventId]);
        return $read->fetch(PDO::FETCH_ASSOC);
    }

    private function consumedAt(int $eventId): ?string
    {
        $read = $this->pdo->prepare('SELECT consumed_at FROM events WHERE event_id = ?');
        $read->execute([$eventId]);
        return $read->fetchColumn();
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
        self::assertNull($this->consumedAt($event->eventId));
        $failure = $this->failureOf($event->eventId);
        self::assertSame(['grant_failed', 1, 'DomainException: inventory down'],
            [$failure['kind'], (int) $failure['attempts'], $failure['last_error']]);

        $granted = [];
        $record = static function (Grant $grant) use (&$granted): void {
            $granted[] = $grant->event->eventId;
        };
        Stack::waitUntil(fn (): bool => $this->consumer->consume($this->pdo, $record) === 1, 10, 'the retry of the failed grant');
        self::assertSame([$event->eventId], $granted);
        self::assertFalse($this->failureOf($event->eventId), 'granted: no longer a failure');
    }

    /**
     * Player A's first event fails to grant. Player B's later event is granted in the same pull; A's
     * second event waits behind A's first, which is tried again later and, once the inventory is back,
     * granted before A's second. Before, the first pull threw and no event of anyone went through.
     */
    public function testAFailingGrantHoldsBackOnlyThatPlayersLaterEvents(): void
    {
        $playerA = self::deliveredUser(Stack::PAY_6, 'zydj.product.pay_30');
        $playerB = self::deliveredUser(Stack::PAY_6);
        [$a1, $a2] = self::ids(Stack::eventsOf($this->pdo, $playerA));
        [$b1] = self::ids(Stack::eventsOf($this->pdo, $playerB));

        $inventoryDown = true;
        $granted = [];
        $grant = static function (Grant $grant) use (&$inventoryDown, &$granted, $a1): void {
            if ($inventoryDown && $grant->event->eventId === $a1) {
                throw new \DomainException('inventory down');
            }
            $granted[] = $grant->event->eventId;
        };
        $reported = [];
        $consumer = new EventConsumer(onFailure: static function (int $eventId, \Throwable $error) use (&$reported): void {
            $reported[] = [$eventId, $error->getMessage()];
        });

        self::assertSame(1, $consumer->consume($this->pdo, $grant), 'B\'s event');
        self::assertSame([$b1], $granted);
        self::assertSame([[$a1, 'inventory down']], $reported);
        self::assertSame('grant_failed', $this->failureOf($a1)['kind']);
        self::assertSame([null, null], [$this->consumedAt($a1), $this->consumedAt($a2)]);
        self::assertSame(0, $consumer->consume($this->pdo, $grant), 'A\'s first is not due yet; A\'s second waits for it');
        self::assertSame([$b1], $granted);

        $inventoryDown = false;
        Stack::waitUntil(fn (): bool => $consumer->consume($this->pdo, $grant) > 0, 10, 'A\'s first event tried again');
        self::assertSame(1, $consumer->consume($this->pdo, $grant), 'then A\'s second');
        self::assertSame([$b1, $a1, $a2], $granted);
        self::assertFalse($this->failureOf($a1));
    }

    /**
     * A type the library does not know (here `gift_received`, a type a newer service might write) is
     * recorded and consumed without a grant, by pull and by push, and holds nothing back: not even the
     * same player's later event. Before, Event::fromRow threw and the pull stopped there for good.
     */
    public function testAnEventOfAnUnknownTypeIsRecordedAndSkipped(): void
    {
        $root = Stack::rootPdo();
        $root->exec('USE ' . Stack::env('IAP_DB_NAME'));
        [$columnType, $comment] = $root->query("SELECT COLUMN_TYPE, COLUMN_COMMENT FROM information_schema.COLUMNS
            WHERE TABLE_SCHEMA = DATABASE() AND TABLE_NAME = 'events' AND COLUMN_NAME = 'type'")->fetch(PDO::FETCH_NUM);
        $modifyType = static fn (string $type): int|false => $root->exec("ALTER TABLE events MODIFY COLUMN type $type NOT NULL COMMENT " . $root->quote($comment));
        $modifyType(substr($columnType, 0, -1) . ",'gift_received')");
        try {
            $player = self::deliveredUser(Stack::PAY_6);
            [$delivered] = self::ids(Stack::eventsOf($this->pdo, $player));
            $copy = $this->pdo->prepare(<<<'SQL'
                INSERT INTO events (type, transaction_id, original_transaction_id, order_id, user_id, product_id, quantity,
                                    environment, occurred_at, created_at, status)
                SELECT ?, transaction_id, original_transaction_id, order_id, user_id, product_id, quantity, environment,
                       occurred_at, UTC_TIMESTAMP(3), 'sent' FROM events WHERE event_id = ?
                SQL);
            $copy->execute(['gift_received', $delivered]);
            $unknown = (int) $this->pdo->lastInsertId();
            [$other] = self::ids(Stack::eventsOf($this->pdo, self::deliveredUser(Stack::PAY_6)));
            $copy->execute(['delivered', $delivered]);
            $later = (int) $this->pdo->lastInsertId();

            $granted = [];
            $grant = static function (Grant $grant) use (&$granted): void {
                $granted[] = $grant->event->eventId;
            };
            self::assertSame(4, $this->consumer->consume($this->pdo, $grant));
            self::assertSame([$delivered, $other, $later], $granted);
            self::assertNotNull($this->consumedAt($unknown));
            $failure = $this->failureOf($unknown);
            self::assertSame(['unknown_type', 'gift_received', null], [$failure['kind'], $failure['type'], $failure['retry_at']]);

            $copy->execute(['gift_received', $delivered]);
            $pushed = (int) $this->pdo->lastInsertId();
            $event = new Event($pushed, 'gift_received', '2026-11-28T08:00:00Z', 'Production', '1', '1', 'o', $player, Stack::PAY_6, 1);
            self::assertTrue($this->consumer->consumeEvent($this->pdo, $event, $grant), 'pushed: consumed, answer 2xx');
            self::assertFalse($this->consumer->consumeEvent($this->pdo, $event, $grant), 'pushed again');
            self::assertSame([$delivered, $other, $later], $granted);
            self::assertSame('unknown_type', $this->failureOf($pushed)['kind']);
        } finally {
            $root->exec("DELETE FROM events WHERE type = 'gift_received'");
            $modifyType($columnType);
        }
    }

    /**
     * A pull reads a Google Play quantity-based partial refund from its `refunded` event (written here as a
     * voided purchase writes it: 2 of 3 taken back): the take-back is 2, not the purchase's 3.
     */
    public function testAPulledGooglePartialRefundTakesBackOnlyItsQuantity(): void
    {
        $player = self::deliveredUser(Stack::PAY_6);
        [$delivered] = self::ids(Stack::eventsOf($this->pdo, $player));
        $this->pdo->prepare("UPDATE events SET consumed_at = UTC_TIMESTAMP(3) WHERE event_id = ?")->execute([$delivered]);
        $this->pdo->prepare(<<<'SQL'
            INSERT INTO events (type, store, transaction_id, original_transaction_id, order_id, user_id, product_id, quantity,
                                refunded_quantity, environment, occurred_at, created_at, status)
            SELECT 'refunded', 'google_play', transaction_id, original_transaction_id, order_id, user_id, product_id, 3, 2,
                   environment, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), 'sent'
            FROM events WHERE event_id = ?
            SQL)->execute([$delivered]);
        $refunded = (int) $this->pdo->lastInsertId();

        $taken = [];
        self::assertSame(1, $this->consumer->consume($this->pdo, static function (Grant $grant) use (&$taken): void {
            $taken[] = [$grant->event->eventId, $grant->event->store, $grant->action, $grant->event->refundedQuantity, $grant->quantity()];
        }));
        self::assertSame([[$refunded, 'google_play', GrantAction::TakeBack, 2, 2]], $taken);
    }

    /**
     * A `subscription_changed` event (written here as the service writes one for a chain of the player's)
     * goes to the game's onSubscriptionChanged inside the claiming transaction, with the chain's new
     * state, and never to the grant; a handler that throws is retried as a grant is, holding back the
     * player's later events; without a handler the event is consumed with no call.
     */
    public function testASubscriptionChangeGoesToTheGamesHandlerOnce(): void
    {
        $player = self::deliveredUser(Stack::PAY_6);
        [$delivered] = self::ids(Stack::eventsOf($this->pdo, $player));
        $change = $this->pdo->prepare(<<<'SQL'
            INSERT INTO events (type, store, transaction_id, original_transaction_id, order_id, user_id, product_id, quantity,
                                environment, occurred_at, created_at, status, subscription_status, expires_at, auto_renew)
            SELECT 'subscription_changed', store, transaction_id, original_transaction_id, order_id, user_id, product_id,
                   quantity, environment, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), 'sent', ?, '2026-12-28 08:00:00.000', ?
            FROM events WHERE event_id = ?
            SQL);
        $change->execute(['grace_period', 0, $delivered]);
        $changed = (int) $this->pdo->lastInsertId();
        $change->execute(['active', null, $delivered]);
        $unhandled = (int) $this->pdo->lastInsertId();
        $this->pdo->prepare("UPDATE events SET consumed_at = UTC_TIMESTAMP(3) WHERE event_id = ?")->execute([$delivered]);

        $granted = [];
        $grant = static function (Grant $grant) use (&$granted): void {
            $granted[] = $grant->event->eventId;
        };
        $failing = true;
        $told = [];
        $consumer = new EventConsumer(onSubscriptionChanged: static function (Event $event, PDO $pdo) use (&$failing, &$told): void {
            self::assertTrue($pdo->inTransaction(), 'the handler runs inside the claiming transaction');
            if ($failing) {
                throw new \DomainException('mailer down');
            }
            $told[] = [$event->eventId, $event->subscription?->status, $event->subscription?->expiresAt,
                $event->subscription?->autoRenew, $event->subscription?->originalTransactionId];
        });
        self::assertSame(0, $consumer->consume($this->pdo, $grant));
        self::assertSame(['grant_failed', 'DomainException: mailer down'],
            [$this->failureOf($changed)['kind'], $this->failureOf($changed)['last_error']]);
        self::assertNull($this->consumedAt($unhandled), 'the player\'s later event waits');

        $failing = false;
        Stack::waitUntil(fn (): bool => $consumer->consume($this->pdo, $grant) > 0, 10, 'the handler tried again');
        $original = Stack::eventsOf($this->pdo, $player)[0]->originalTransactionId;
        self::assertSame([[$changed, 'grace_period', '2026-12-28T08:00:00Z', false, $original]], $told);
        self::assertFalse($this->failureOf($changed));

        self::assertSame(1, (new EventConsumer())->consume($this->pdo, $grant), 'no handler: consumed with no call');
        self::assertNotNull($this->consumedAt($unhandled));
        self::assertSame([], $granted, 'a subscription change is never a grant');
        self::assertCount(1, $told);
    }

    /**
     * Called inside the game's own transaction, the claim and the grant join it: the caller's rollback
     * takes both back and its commit keeps both; a grant's exception is left to the caller and its
     * transaction stays open. Before, beginTransaction() threw "There is already an active transaction".
     */
    public function testTheClaimAndTheGrantJoinTheCallersTransaction(): void
    {
        [$event] = Stack::eventsOf($this->pdo, self::deliveredUser(Stack::PAY_6));
        $addGoods = Stack::addGoods(...);
        $goods = fn (): int => (int) $this->pdo->query("SELECT COUNT(*) FROM php_game_inventory WHERE event_id = $event->eventId")->fetchColumn();

        $this->pdo->beginTransaction();
        self::assertTrue($this->consumer->consumeEvent($this->pdo, $event, $addGoods));
        self::assertTrue($this->pdo->inTransaction(), 'the caller\'s transaction is still open');
        $this->pdo->rollBack();
        self::assertSame([null, 0], [$this->consumedAt($event->eventId), $goods()]);

        $this->pdo->beginTransaction();
        try {
            $this->consumer->consumeEvent($this->pdo, $event, static function (): void {
                throw new \DomainException('inventory down');
            });
            self::fail('the grant\'s exception must reach the caller');
        } catch (\DomainException) {
            self::assertTrue($this->pdo->inTransaction(), 'the caller rolls back, not the library');
        }
        $this->pdo->rollBack();
        self::assertFalse($this->failureOf($event->eventId), 'the caller\'s failure is the caller\'s to record');

        $this->pdo->beginTransaction();
        self::assertTrue($this->consumer->consumeEvent($this->pdo, $event, $addGoods));
        $this->pdo->commit();
        self::assertNotNull($this->consumedAt($event->eventId));
        self::assertSame(1, $goods());
    }

    /**
     * With a framework's transaction (FrameworkTransactions behaves as Laravel's DB::transaction and
     * Doctrine DBAL's transactional(): the outermost level begins, inner ones are savepoints), each
     * event is claimed and granted in one of its transactions, so the grant may open its own nested
     * one; a failing grant is rolled back by the framework and recorded.
     */
    public function testAFrameworksTransactionWrapsEachEvent(): void
    {
        $player = self::deliveredUser(Stack::PAY_6, 'zydj.product.pay_30');
        [$first, $second] = self::ids(Stack::eventsOf($this->pdo, $player));
        $framework = new FrameworkTransactions($this->pdo);
        $levels = [];
        $grant = static function (Grant $grant, PDO $pdo) use ($framework, &$levels, $second): void {
            $framework->transaction(static function () use ($grant, $pdo, $framework, &$levels, $second): void {
                $levels[] = $framework->level();
                Stack::addGoods($grant, $pdo);
                if ($grant->event->eventId === $second) {
                    throw new \DomainException('inventory down');
                }
            });
        };
        $consumer = new EventConsumer(transaction: static fn (\Closure $work): mixed => $framework->transaction($work));

        self::assertSame(1, $consumer->consume($this->pdo, $grant));
        self::assertSame([2, 2], $levels, 'each grant nested in the framework\'s transaction of its event');
        self::assertSame(0, $framework->level());
        self::assertNotNull($this->consumedAt($first));
        self::assertNull($this->consumedAt($second));
        self::assertSame('grant_failed', $this->failureOf($second)['kind']);
        self::assertSame([$first], array_map('intval', $this->pdo->query(
            "SELECT event_id FROM php_game_inventory WHERE event_id IN ($first, $second)")->fetchAll(PDO::FETCH_COLUMN)));
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
