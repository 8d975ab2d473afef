<?php

declare(strict_types=1);

namespace IapFcgi\Tests\Integration;

use PHPUnit\Framework\TestCase;

/**
 * The offline suite in a process whose environment holds PATH alone: no stack variable, no server.
 * (Here rather than in the offline suite, which it runs.)
 */
final class OfflineSuiteTest extends TestCase
{
    public function testTheOfflineSuitePassesWithoutTheStacksEnvironment(): void
    {
        $phpunit = realpath($_SERVER['argv'][0]);
        $process = proc_open([PHP_BINARY, $phpunit, '-c', __DIR__ . '/../../phpunit.xml.dist', '--testsuite', 'offline'],
            [1 => ['pipe', 'w'], 2 => ['pipe', 'w']], $pipes, null, ['PATH' => (string) getenv('PATH')]);
        $output = stream_get_contents($pipes[1]) . stream_get_contents($pipes[2]);
        self::assertSame(0, proc_close($process), $output);
        self::assertMatchesRegularExpression('/^OK \([1-9][0-9]* tests/m', $output);
    }
}
