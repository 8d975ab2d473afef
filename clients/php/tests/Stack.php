<?php

declare(strict_types=1);

namespace IapFcgi\Tests;

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
        return new PDO(
            sprintf('mysql:host=%s;port=%s;dbname=%s;charset=utf8mb4', self::env('IAP_DB_HOST'), self::env('IAP_DB_PORT'), self::env('IAP_DB_NAME')),
            self::env('IAP_DB_USER'),
            self::env('IAP_DB_PASSWORD'),
            [PDO::ATTR_ERRMODE => PDO::ERRMODE_EXCEPTION],
        );
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
}
