<?php

declare(strict_types=1);

namespace IapFcgi\Tests;

use PDO;

/**
 * Transactions as Laravel's DB::transaction() and Doctrine DBAL's transactional() run them on one
 * PDO: the outermost level begins and commits, a nested one is a savepoint, and an exception rolls
 * back its own level and goes on up. A PDO transaction begun outside it is invisible to it, which is
 * why the library must be able to run its work through it.
 */
final class FrameworkTransactions
{
    private int $level = 0;

    public function __construct(private readonly PDO $pdo)
    {
    }

    public function level(): int
    {
        return $this->level;
    }

    public function transaction(\Closure $work): mixed
    {
        $this->level === 0 ? $this->pdo->beginTransaction() : $this->pdo->exec('SAVEPOINT level' . ($this->level + 1));
        $this->level++;
        try {
            $result = $work();
        } catch (\Throwable $error) {
            $this->level === 1 ? $this->pdo->rollBack() : $this->pdo->exec("ROLLBACK TO SAVEPOINT level$this->level");
            $this->level--;
            throw $error;
        }
        $this->level === 1 ? $this->pdo->commit() : $this->pdo->exec("RELEASE SAVEPOINT level$this->level");
        $this->level--;
        return $result;
    }
}
