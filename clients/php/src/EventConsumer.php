<?php

declare(strict_types=1);

namespace IapFcgi;

use PDO;

/**
 * Grants or takes back goods exactly once per event: in one database transaction it claims the event
 * (`UPDATE events SET consumed_at = ... WHERE event_id = ? AND consumed_at IS NULL`) and calls the
 * game's grant only when that changed one row. A second worker, a replayed webhook POST or a crash
 * between the two never grants twice: a failed grant rolls the claim back, and a second claim of the
 * same event changes no row.
 *
 * One event never stops the others. A grant that throws is recorded in the library's table
 * `iap_event_failures` (sql/event_consumer.sql) and tried again later (1 s, doubling to about an hour);
 * until it succeeds that user's later events wait, in order, and every other user's go on. An event of
 * a type this library does not know is recorded there and consumed without a grant. A
 * `subscription_changed` event grants nothing: it goes to the `onSubscriptionChanged` handler the game
 * registered (the same exactly-once claim and the same retries), or is consumed without a call.
 *
 * The transaction is the PDO's own unless one is open already (then the claim and the grant join it,
 * and a grant's exception is left to the caller's rollback), or the `transaction` given runs it: the
 * framework's, so that its own nesting (Laravel's DB::transaction, Doctrine's flush()) works inside
 * the grant. The grant is called as `$grant(Grant $grant, PDO $pdo)` inside the transaction: write the
 * goods with that connection and do not commit.
 *
 * The game's tables must be in the same database as `events`; the account's grants are in README.md.
 */
final class EventConsumer
{
    private const CLAIM = 'UPDATE events SET consumed_at = UTC_TIMESTAMP(3) WHERE event_id = ? AND consumed_at IS NULL';

    /**
     * The unconsumed events in event_id order, but not those of a user whose earlier event's grant
     * failed and is not granted yet, nor a failed one before its retry time.
     */
    private const UNCONSUMED = <<<'SQL'
        SELECT e.event_id, e.user_id FROM events e
        WHERE e.consumed_at IS NULL
          AND NOT EXISTS (
            SELECT 1 FROM iap_event_failures f JOIN events held ON held.event_id = f.event_id AND held.consumed_at IS NULL
            WHERE f.user_id = e.user_id AND f.kind = 'grant_failed'
              AND (f.event_id < e.event_id OR (f.event_id = e.event_id AND f.retry_at > UTC_TIMESTAMP(3))))
        ORDER BY e.event_id LIMIT ?
        SQL;

    /**
     * The claimed event as the table has it: the refund's share from its transaction (a Google partial
     * refund's count and a subscription's new state from the event itself), the refund request's
     * reason and deadline from the ledger. The same for pull and push, so both grant alike.
     */
    private const EVENT = <<<'SQL'
        SELECT e.event_id, e.type, DATE_FORMAT(e.occurred_at, '%Y-%m-%dT%H:%i:%sZ') AS occurred_at, e.environment,
               e.transaction_id, e.original_transaction_id, e.order_id, e.user_id, e.product_id, e.quantity,
               t.revocation_reason, t.revocation_type, t.revocation_percentage,
               r.reason AS refund_reason, DATE_FORMAT(r.deadline_at, '%Y-%m-%dT%H:%i:%sZ') AS refund_deadline_at,
               e.store, e.refunded_quantity, e.subscription_status,
               DATE_FORMAT(e.expires_at, '%Y-%m-%dT%H:%i:%sZ') AS expires_at, e.auto_renew
        FROM events e
        LEFT JOIN transactions t ON t.transaction_id = e.transaction_id
        LEFT JOIN consumption_requests r ON r.event_id = e.event_id
        WHERE e.event_id = ?
        SQL;

    /**
     * @param (\Closure(\Closure(): mixed): mixed)|null $transaction runs its argument in one database
     *        transaction on the PDO given to consume(), and returns its result: a framework's, as
     *        `fn (\Closure $work) => DB::transaction($work)` (Laravel) or
     *        `fn (\Closure $work) => $connection->transactional($work)` (Doctrine DBAL). Default: the
     *        PDO's own beginTransaction() and commit(), or the caller's transaction when one is open.
     * @param (\Closure(int, \Throwable): void)|null $onFailure told of each grant that threw (the event
     *        id and the exception), to log it: a pull goes on with the other users' events
     * @param (\Closure(Event, PDO): mixed)|null $onSubscriptionChanged called for each
     *        `subscription_changed` event instead of the grant (there is nothing to grant: renewals come
     *        as `delivered` events), inside the claiming transaction as a grant is, and retried as a
     *        grant is when it throws; the event's `subscription` has the chain's new state. Without
     *        it those events are consumed with no call (Entitlements answers what is in force now).
     */
    public function __construct(
        private readonly ?\Closure $transaction = null,
        private readonly ?\Closure $onFailure = null,
        private readonly ?\Closure $onSubscriptionChanged = null,
    ) {
    }

    /**
     * Pull: the unconsumed events in event_id order, at most `$limit`, each in its own transaction.
     * Returns how many this call consumed (granted, or skipped for an unknown type); a failing grant is
     * recorded, reported to onFailure and passed over. Call it again until it returns 0.
     *
     * @param callable(Grant, PDO): mixed $grant
     */
    public function consume(PDO $pdo, callable $grant, int $limit = 100): int
    {
        self::requireMariaDbWithExceptions($pdo);
        if ($limit < 1) {
            throw new \InvalidArgumentException('limit must be at least 1');
        }
        return EventFailures::requiringTable(function () use ($pdo, $grant, $limit): int {
            $unconsumed = $pdo->prepare(self::UNCONSUMED);
            $unconsumed->bindValue(1, $limit, PDO::PARAM_INT);
            $unconsumed->execute();
            $consumed = 0;
            $waiting = [];   // users whose event failed in this call: their later events wait for it
            foreach ($unconsumed->fetchAll(PDO::FETCH_ASSOC) as $row) {
                if (isset($waiting[$row['user_id']])) {
                    continue;
                }
                try {
                    $consumed += $this->consumeOne($pdo, (int) $row['event_id'], $grant) ? 1 : 0;
                } catch (GrantFailed) {
                    $waiting[$row['user_id']] = true;
                }
            }
            return $consumed;
        });
    }

    /**
     * Push: the event of a webhook POST (WebhookVerifier::verify). True when this call consumed it
     * (granted it, or recorded and skipped a type this library does not know); false when it had been
     * consumed before (a POST sent again): answer 2xx either way. A grant's exception reaches the
     * caller (answer 5xx: iap-fcgi sends the event again later, and that user's later events wait).
     *
     * @param callable(Grant, PDO): mixed $grant
     */
    public function consumeEvent(PDO $pdo, Event $event, callable $grant): bool
    {
        self::requireMariaDbWithExceptions($pdo);
        return EventFailures::requiringTable(function () use ($pdo, $event, $grant): bool {
            try {
                return $this->consumeOne($pdo, $event->eventId, $grant);
            } catch (GrantFailed $failed) {
                throw $failed->getPrevious();
            }
        });
    }

    /**
     * Claims and grants one event in one transaction. When that throws and no transaction of the
     * caller's is still open, the failure is recorded and reported, then thrown as GrantFailed;
     * inside the caller's transaction the exception is left as it is, for the caller to roll back.
     *
     * @throws GrantFailed
     */
    private function consumeOne(PDO $pdo, int $eventId, callable $grant): bool
    {
        try {
            return $this->inTransaction($pdo, fn (): bool => $this->claimAndGrant($pdo, $eventId, $grant));
        } catch (\Throwable $error) {
            if ($pdo->inTransaction()) {
                throw $error;
            }
            EventFailures::recordGrantFailed($pdo, $eventId, $error);
            if ($this->onFailure !== null) {
                ($this->onFailure)($eventId, $error);
            }
            throw new GrantFailed($error);
        }
    }

    private function claimAndGrant(PDO $pdo, int $eventId, callable $grant): bool
    {
        $claim = $pdo->prepare(self::CLAIM);
        $claim->execute([$eventId]);
        if ($claim->rowCount() !== 1) {
            return false;
        }
        $read = $pdo->prepare(self::EVENT);
        $read->execute([$eventId]);
        $event = Event::fromRow($read->fetch(PDO::FETCH_ASSOC));
        if ($event->type === null) {
            EventFailures::recordUnknownType($pdo, $event);
            return true;
        }
        if ($event->type !== EventType::SubscriptionChanged) {
            $grant(Grant::of($event), $pdo);
        } elseif ($this->onSubscriptionChanged !== null) {
            ($this->onSubscriptionChanged)($event, $pdo);
        }
        EventFailures::clear($pdo, $eventId);
        return true;
    }

    /**
     * @param \Closure(): bool $work
     */
    private function inTransaction(PDO $pdo, \Closure $work): bool
    {
        if ($this->transaction !== null) {
            return (bool) ($this->transaction)($work);
        }
        if ($pdo->inTransaction()) {
            return $work();
        }
        $pdo->beginTransaction();
        try {
            $result = $work();
            $pdo->commit();
            return $result;
        } catch (\Throwable $error) {
            if ($pdo->inTransaction()) {
                $pdo->rollBack();  // neither claimed nor granted: the next run or POST tries again
            }
            throw $error;
        }
    }

    private static function requireMariaDbWithExceptions(PDO $pdo): void
    {
        if ($pdo->getAttribute(PDO::ATTR_DRIVER_NAME) !== 'mysql') {
            throw new \InvalidArgumentException('EventConsumer needs a pdo_mysql connection to the database of iap-fcgi (MariaDB)');
        }
        if ($pdo->getAttribute(PDO::ATTR_ERRMODE) !== PDO::ERRMODE_EXCEPTION) {
            throw new \InvalidArgumentException('EventConsumer needs a PDO with PDO::ATTR_ERRMODE = PDO::ERRMODE_EXCEPTION');
        }
    }
}
