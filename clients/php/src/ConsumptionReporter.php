<?php

declare(strict_types=1);

namespace IapFcgi;

use PDO;

/**
 * The game's side of refund requests (docs/events.md "Refund requests"). iap-fcgi answers Apple's
 * CONSUMPTION_REQUEST only for a user whose consent is in force, with the consumption the game
 * reports: in the answer to the `refund_requested` webhook, else from the `consumption` table.
 * Consumption is in milliunits: 0 (nothing used) to 100000 (all of it).
 *
 * The game's account needs SELECT, INSERT and UPDATE on `consumption_consent` and `consumption`: every
 * method reads the rows (an UPDATE ... WHERE and an INSERT ... ON DUPLICATE KEY UPDATE do too).
 */
final class ConsumptionReporter
{
    public const MAX_MILLI = 100000;

    /** The user agreed that consumption data may go to Apple (again, after a withdrawal). */
    public function recordConsent(PDO $pdo, string $userId): void
    {
        $pdo->prepare(<<<'SQL'
            INSERT INTO consumption_consent (user_id, consented_at, withdrawn_at) VALUES (?, UTC_TIMESTAMP(3), NULL)
            ON DUPLICATE KEY UPDATE consented_at = VALUES(consented_at)
            SQL)->execute([$userId]);
    }

    /** The user withdrew the consent. False when there was none to withdraw. */
    public function withdrawConsent(PDO $pdo, string $userId): bool
    {
        $withdraw = $pdo->prepare('UPDATE consumption_consent SET withdrawn_at = UTC_TIMESTAMP(3) WHERE user_id = ?');
        $withdraw->execute([$userId]);
        return $withdraw->rowCount() === 1;
    }

    /** Whether the user's consent is in force: given, and not withdrawn since. */
    public function hasConsent(PDO $pdo, string $userId): bool
    {
        $read = $pdo->prepare(<<<'SQL'
            SELECT 1 FROM consumption_consent
            WHERE user_id = ? AND (withdrawn_at IS NULL OR withdrawn_at < consented_at)
            SQL);
        $read->execute([$userId]);
        return $read->fetchColumn() !== false;
    }

    /** How much of a purchase the player used, 0-100000, replacing what was recorded before. */
    public function recordConsumption(PDO $pdo, string $transactionId, int $consumedMilli): void
    {
        self::requireMilli($consumedMilli);
        $pdo->prepare(<<<'SQL'
            INSERT INTO consumption (transaction_id, consumed_milli, updated_at) VALUES (?, ?, UTC_TIMESTAMP(3))
            ON DUPLICATE KEY UPDATE consumed_milli = VALUES(consumed_milli), updated_at = VALUES(updated_at)
            SQL)->execute([$transactionId, $consumedMilli]);
    }

    /** The recorded consumption of a transaction; null when the game recorded none. */
    public function consumption(PDO $pdo, string $transactionId): ?int
    {
        $read = $pdo->prepare('SELECT consumed_milli FROM consumption WHERE transaction_id = ?');
        $read->execute([$transactionId]);
        $milli = $read->fetchColumn();
        return $milli === false ? null : (int) $milli;
    }

    /** The body that answers a `refund_requested` webhook POST (with a 2xx): {"consumption_percentage": N}. */
    public function answer(int $consumedMilli): string
    {
        self::requireMilli($consumedMilli);
        return json_encode(['consumption_percentage' => $consumedMilli], JSON_THROW_ON_ERROR);
    }

    /**
     * The answer to a `refund_requested` event from the `consumption` table; null when the game has no
     * row for the transaction (answer 204: the service sends Apple no consumption then).
     */
    public function answerFromRecord(PDO $pdo, Event $event): ?string
    {
        $milli = $this->consumption($pdo, $event->transactionId);
        return $milli === null ? null : $this->answer($milli);
    }

    private static function requireMilli(int $milli): void
    {
        if ($milli < 0 || $milli > self::MAX_MILLI) {
            throw new \InvalidArgumentException("consumption must be 0-100000 milliunits, not $milli");
        }
    }
}
