<?php

declare(strict_types=1);

namespace IapFcgi;

use PDO;

/**
 * Grants or takes back goods exactly once per event (API.md "Events for the game", Pull): in one
 * database transaction it claims the event (`UPDATE events SET consumed_at = ... WHERE event_id = ? AND
 * consumed_at IS NULL`) and calls the game's grant only when that changed one row. A second worker, a
 * replayed webhook POST or a crash between the two never grants twice: a failed grant rolls the claim
 * back, and a second claim of the same event changes no row.
 *
 * The game's tables must be in the same database as `events` (or reachable in the same transaction),
 * and its account needs SELECT on `events`, `transactions` and `consumption_requests` and
 * UPDATE (consumed_at) on `events`. The grant is called as `$grant(Grant $grant, PDO $pdo)` inside the
 * transaction: write the goods with that PDO and do not commit.
 */
final class EventConsumer
{
    private const CLAIM = 'UPDATE events SET consumed_at = UTC_TIMESTAMP(3) WHERE event_id = ? AND consumed_at IS NULL';

    private const UNCONSUMED = 'SELECT event_id FROM events WHERE consumed_at IS NULL ORDER BY event_id LIMIT ?';

    /**
     * The claimed event as the table has it: the refund's share from its transaction, the refund
     * request's reason and deadline from the ledger. The same for pull and push, so both grant alike.
     */
    private const EVENT = <<<'SQL'
        SELECT e.event_id, e.type, DATE_FORMAT(e.occurred_at, '%Y-%m-%dT%H:%i:%sZ') AS occurred_at, e.environment,
               e.transaction_id, e.original_transaction_id, e.order_id, e.user_id, e.product_id, e.quantity,
               t.revocation_reason, t.revocation_type, t.revocation_percentage,
               r.reason AS refund_reason, DATE_FORMAT(r.deadline_at, '%Y-%m-%dT%H:%i:%sZ') AS refund_deadline_at
        FROM events e
        LEFT JOIN transactions t ON t.transaction_id = e.transaction_id
        LEFT JOIN consumption_requests r ON r.event_id = e.event_id
        WHERE e.event_id = ?
        SQL;

    /**
     * Pull: the unconsumed events in event_id order, at most `$limit`, each in its own transaction.
     * Returns how many this call claimed (and granted). Call it again until it returns 0.
     *
     * @param callable(Grant, PDO): mixed $grant
     */
    public function consume(PDO $pdo, callable $grant, int $limit = 100): int
    {
        self::requireExceptions($pdo);
        if ($limit < 1) {
            throw new \InvalidArgumentException('limit must be at least 1');
        }
        $unconsumed = $pdo->prepare(self::UNCONSUMED);
        $unconsumed->bindValue(1, $limit, PDO::PARAM_INT);
        $unconsumed->execute();
        $claimed = 0;
        foreach ($unconsumed->fetchAll(PDO::FETCH_COLUMN) as $eventId) {
            if ($this->claimAndGrant($pdo, (int) $eventId, $grant)) {
                $claimed++;
            }
        }
        return $claimed;
    }

    /**
     * Push: the event of a webhook POST (WebhookVerifier::verify). True when this call claimed and
     * granted it; false when it had been consumed before (a POST sent again): answer 2xx either way.
     *
     * @param callable(Grant, PDO): mixed $grant
     */
    public function consumeEvent(PDO $pdo, Event $event, callable $grant): bool
    {
        self::requireExceptions($pdo);
        return $this->claimAndGrant($pdo, $event->eventId, $grant);
    }

    private function claimAndGrant(PDO $pdo, int $eventId, callable $grant): bool
    {
        $pdo->beginTransaction();
        try {
            $claim = $pdo->prepare(self::CLAIM);
            $claim->execute([$eventId]);
            $claimed = $claim->rowCount() === 1;
            if ($claimed) {
                $read = $pdo->prepare(self::EVENT);
                $read->execute([$eventId]);
                $grant(Grant::of(Event::fromRow($read->fetch(PDO::FETCH_ASSOC))), $pdo);
            }
            $pdo->commit();
            return $claimed;
        } catch (\Throwable $error) {
            $pdo->rollBack();      // neither claimed nor granted: the next run or POST tries again
            throw $error;
        }
    }

    private static function requireExceptions(PDO $pdo): void
    {
        if ($pdo->getAttribute(PDO::ATTR_ERRMODE) !== PDO::ERRMODE_EXCEPTION) {
            throw new \InvalidArgumentException('EventConsumer needs a PDO with PDO::ATTR_ERRMODE = PDO::ERRMODE_EXCEPTION');
        }
    }
}
