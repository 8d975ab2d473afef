<?php

declare(strict_types=1);

namespace IapFcgi\Tests;

use IapFcgi\Event;
use IapFcgi\Grant;
use PDO;

/**
 * The test stack (scripts/stack) as its exported variables describe it: the service through nginx,
 * MariaDB as the service's user and as root, and the simulator's receipts. A missing variable fails
 * the test: with the stack up there is no reason to skip.
 */
final class Stack
{
    public const REPO = __DIR__ . '/../../..';
    public const PAY_6 = 'zydj.product.pay_6';

    public static function env(string $name): string
    {
        $value = getenv($name);
        if ($value === false || $value === '') {
            throw new \RuntimeException("$name is not set: export the stack's variables (eval \"\$(scripts/stack env)\")");
        }
        return $value;
    }

    public static function baseUrl(): string
    {
        return self::env('IAP_BASE_URL');
    }

    /** A connection as the game would open it (the service's account, the stack's database). */
    public static function pdo(): PDO
    {
        return self::pdoAs(self::env('IAP_DB_USER'), self::env('IAP_DB_PASSWORD'));
    }

    /** A connection to the stack's database, over TCP to IAP_DB_HOST, as another account. */
    public static function pdoAs(string $user, string $password): PDO
    {
        return new PDO(
            sprintf('mysql:host=%s;port=%s;dbname=%s;charset=utf8mb4', self::env('IAP_DB_HOST'), self::env('IAP_DB_PORT'), self::env('IAP_DB_NAME')),
            $user,
            $password,
            [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION],
        );
    }

    /**
     * The library's own table (sql/event_consumer.sql), as a game creates it once, and the test game's
     * inventory: one row per event granted (addGoods).
     */
    public static function createGameTables(PDO $pdo): void
    {
        $pdo->exec((string) file_get_contents(__DIR__ . '/../sql/event_consumer.sql'));
        $pdo->exec('CREATE TABLE IF NOT EXISTS php_game_inventory (event_id BIGINT UNSIGNED NOT NULL PRIMARY KEY,
            user_id VARCHAR(64) NOT NULL, product_id VARCHAR(128) NOT NULL)');
    }

    /** The test game's grant: the goods of the event into php_game_inventory, with the claiming connection. */
    public static function addGoods(Grant $grant, PDO $pdo): void
    {
        $pdo->prepare('INSERT INTO php_game_inventory (event_id, user_id, product_id) VALUES (?, ?, ?)')
            ->execute([$grant->event->eventId, $grant->event->userId, $grant->event->productId]);
    }

    /** Root over the stack's socket: information_schema.INNODB_TRX needs the PROCESS privilege. */
    public static function rootPdo(): PDO
    {
        return new PDO('mysql:unix_socket=' . self::env('IAP_MARIADB_SOCKET'), 'root', null, [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION]);
    }

    public static function newUserId(): string
    {
        return 'php-' . bin2hex(random_bytes(6));
    }

    /**
     * An app receipt the simulator accepts, with one purchase of each product
     * (Tests/Simulator/receipts.py app --json).
     *
     * @return array{receipt_data: string, purchases: list<array<string, mixed>>}
     */
    public static function appReceipt(string ...$products): array
    {
        $command = array_merge(['python3', self::REPO . '/Tests/Simulator/receipts.py', 'app'], $products, ['--json']);
        $output = self::run($command);
        return json_decode($output, true, 32, JSON_THROW_ON_ERROR);
    }

    public const GOOGLE_PACKAGE = 'com.example.game';

    /**
     * A purchase of PAY_6 bought at the stack's Google Play double (its control URL GOOGLE_SIM_CONTROL_URL),
     * as Tests/e2e does: its purchase_token and order_id.
     *
     * @return array{purchase_token: string, order_id: string}
     */
    public static function googlePurchase(int $quantity = 1): array
    {
        $curl = curl_init(self::env('GOOGLE_SIM_CONTROL_URL') . '/purchases');
        curl_setopt_array($curl, [
            CURLOPT_POST => true,
            CURLOPT_POSTFIELDS => json_encode(['package_name' => self::GOOGLE_PACKAGE, 'product_id' => self::PAY_6, 'quantity' => $quantity]),
            CURLOPT_HTTPHEADER => ['Content-Type: application/json'],
            CURLOPT_RETURNTRANSFER => true,
            CURLOPT_TIMEOUT => 10,
        ]);
        $answer = curl_exec($curl);
        $status = curl_getinfo($curl, CURLINFO_RESPONSE_CODE);
        curl_close($curl);
        if ($status !== 200) {
            throw new \RuntimeException("the Google Play double answered $status: $answer");
        }
        return json_decode((string) $answer, true, 16, JSON_THROW_ON_ERROR);
    }

    /** @param list<string> $command */
    public static function run(array $command): string
    {
        $process = proc_open($command, [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes);
        $output = stream_get_contents($pipes[1]);
        $errors = stream_get_contents($pipes[2]);
        $status = proc_close($process);
        if ($status !== 0) {
            throw new \RuntimeException(implode(' ', $command) . " exited $status: $errors");
        }
        return $output;
    }

    /** Polls `probe` until it returns true, failing after `seconds` (a generous deadline, not a sleep that hopes). */
    public static function waitUntil(callable $probe, float $seconds, string $what): void
    {
        $deadline = microtime(true) + $seconds;
        while (!$probe()) {
            if (microtime(true) > $deadline) {
                throw new \RuntimeException("timed out after $seconds s waiting for $what");
            }
            usleep(50_000);
        }
    }

    /** The events of a user, oldest first, as EventConsumer would read them. @return list<Event> */
    public static function eventsOf(PDO $pdo, string $userId): array
    {
        $read = $pdo->prepare(<<<'SQL'
            SELECT event_id, type, occurred_at, environment, transaction_id, original_transaction_id, order_id, user_id,
                   product_id, quantity, NULL AS revocation_reason, NULL AS revocation_type, NULL AS revocation_percentage,
                   NULL AS refund_reason, NULL AS refund_deadline_at, store, refunded_quantity, subscription_status,
                   DATE_FORMAT(expires_at, '%Y-%m-%dT%H:%i:%sZ') AS expires_at, auto_renew
            FROM events WHERE user_id = ? ORDER BY event_id
            SQL);
        $read->execute([$userId]);
        return array_map([Event::class, 'fromRow'], $read->fetchAll(PDO::FETCH_ASSOC));
    }

    /**
     * `php -S` on a free loopback port serving `router`, with `env` added to its environment; returns
     * the process and its base URL once it accepts connections.
     *
     * @param array<string, string> $env
     * @return array{resource, string}
     */
    public static function startPhpServer(string $router, array $env = []): array
    {
        $probe = stream_socket_server('tcp://127.0.0.1:0');
        $port = (int) substr(strrchr(stream_socket_get_name($probe, false), ':'), 1);
        fclose($probe);
        $process = proc_open(['php', '-S', "127.0.0.1:$port", $router], [1 => ['file', '/dev/null', 'w'], 2 => ['file', '/dev/null', 'w']],
            $pipes, null, $env + getenv());
        self::waitUntil(static function () use ($port): bool {
            $connection = @stream_socket_client("tcp://127.0.0.1:$port", timeout: 1);
            return $connection !== false && fclose($connection);
        }, 30, "php -S on port $port");
        return [$process, "http://127.0.0.1:$port"];
    }

    /** @param resource $process */
    public static function stopPhpServer($process): void
    {
        proc_terminate($process);
        proc_close($process);
    }
}
