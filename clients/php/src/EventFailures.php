<?php

declare(strict_types=1);

namespace IapFcgi;

use PDO;

/**
 * EventConsumer's record of the events it passed over, in the library's table `iap_event_failures`
 * (created by sql/event_consumer.sql): a grant that threw (tried again later; the user's later events
 * wait for it) and a type this library does not know (consumed without a grant).
 *
 * @internal
 */
final class EventFailures
{
    public const TABLE = 'iap_event_failures';

    public const SCHEMA_FILE = 'sql/event_consumer.sql';

    /** The retry waits 1 s after the first failure, doubling with each one after, to 2^12 s (about 68 min). */
    private const RECORD_GRANT_FAILED = <<<'SQL'
        INSERT INTO iap_event_failures (event_id, user_id, type, kind, attempts, first_failed_at, last_failed_at, retry_at, last_error)
        SELECT event_id, user_id, type, 'grant_failed', 1, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), UTC_TIMESTAMP(3) + INTERVAL 1 SECOND, ?
        FROM events WHERE event_id = ? AND consumed_at IS NULL
        ON DUPLICATE KEY UPDATE
            retry_at = UTC_TIMESTAMP(3) + INTERVAL (1 << LEAST(iap_event_failures.attempts, 12)) SECOND,
            attempts = iap_event_failures.attempts + 1, last_failed_at = UTC_TIMESTAMP(3), last_error = VALUES(last_error)
        SQL;

    private const RECORD_UNKNOWN_TYPE = <<<'SQL'
        INSERT INTO iap_event_failures (event_id, user_id, type, kind, attempts, first_failed_at, last_failed_at, retry_at, last_error)
        VALUES (?, ?, ?, 'unknown_type', 0, UTC_TIMESTAMP(3), UTC_TIMESTAMP(3), NULL, ?)
        ON DUPLICATE KEY UPDATE kind = 'unknown_type', retry_at = NULL, last_failed_at = UTC_TIMESTAMP(3), last_error = VALUES(last_error)
        SQL;

    private const CLEAR = "DELETE FROM iap_event_failures WHERE event_id = ? AND kind = 'grant_failed'";

    /** A grant that threw, outside any transaction (the one that claimed has been rolled back). */
    public static function recordGrantFailed(PDO $pdo, int $eventId, \Throwable $error): void
    {
        $pdo->prepare(self::RECORD_GRANT_FAILED)->execute([self::describe($error), $eventId]);
    }

    /** An event of a type this library does not know, in the transaction that consumes it. */
    public static function recordUnknownType(PDO $pdo, Event $event): void
    {
        $pdo->prepare(self::RECORD_UNKNOWN_TYPE)->execute([$event->eventId, $event->userId, $event->typeName,
            "this version of iap-fcgi/client does not know the type \"$event->typeName\": consumed without a grant"]);
    }

    /** The event was granted: its earlier failures no longer hold its user's later events. */
    public static function clear(PDO $pdo, int $eventId): void
    {
        $pdo->prepare(self::CLEAR)->execute([$eventId]);
    }

    /** The exception as last_error: class and message, valid UTF-8, at most 1000 characters. */
    private static function describe(\Throwable $error): string
    {
        $text = get_class($error) . ': ' . $error->getMessage();
        if (preg_match('//u', $text) !== 1) {
            $text = (string) preg_replace('/[\x80-\xFF]/', '?', $text);
        }
        preg_match('/\A.{0,1000}/su', $text, $start);
        return $start[0];
    }

    /**
     * Runs `work`; a database error saying the library's table is missing becomes one that says how to
     * create it.
     *
     * @template T
     * @param \Closure(): T $work
     * @return T
     */
    public static function requiringTable(\Closure $work): mixed
    {
        try {
            return $work();
        } catch (\PDOException $error) {
            $noSuchTable = ($error->errorInfo[1] ?? null) === 1146 && str_contains($error->getMessage(), self::TABLE);
            if ($noSuchTable) {
                throw new \LogicException(sprintf('EventConsumer needs the table %s: create it once with the library\'s %s',
                    self::TABLE, self::SCHEMA_FILE), 0, $error);
            }
            throw $error;
        }
    }
}
