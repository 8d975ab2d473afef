<?php

declare(strict_types=1);

namespace IapFcgi\Tests\Offline;

use PHPUnit\Framework\TestCase;
use PHPUnit\Runner\Version;
use PHPUnit\Util\Xml\SchemaFinder;

/** What composer.json and phpunit.xml.dist promise, checked against the library's own source. */
final class PackageTest extends TestCase
{
    private const ROOT = __DIR__ . '/../..';

    /** Extensions every PHP 8 has: nothing to declare. */
    private const ALWAYS_THERE = ['core', 'date', 'hash', 'pcre', 'random', 'reflection', 'spl', 'standard'];

    /** @return array<string, mixed> */
    private static function composer(): array
    {
        return json_decode((string) file_get_contents(self::ROOT . '/composer.json'), true, 16, JSON_THROW_ON_ERROR);
    }

    /**
     * The extensions of every function and class src/ names (`ext-<name>`, as Composer writes them),
     * found by reflection on the running PHP.
     *
     * @return list<string>
     */
    private static function extensionsUsedBySource(): array
    {
        $used = [];
        foreach (glob(self::ROOT . '/src/*.php') as $file) {
            $tokens = \PhpToken::tokenize((string) file_get_contents($file));
            foreach ($tokens as $index => $token) {
                if (!$token->is([T_STRING, T_NAME_FULLY_QUALIFIED, T_NAME_QUALIFIED])) {
                    continue;
                }
                $before = self::neighbour($tokens, $index, -1);
                if ($before !== null && $before->is([T_OBJECT_OPERATOR, T_NULLSAFE_OBJECT_OPERATOR, T_DOUBLE_COLON, T_FUNCTION, T_CONST])) {
                    continue;   // a method, a member or a declaration, not a global name
                }
                $name = ltrim($token->text, '\\');
                $reflection = match (true) {
                    self::neighbour($tokens, $index, 1)?->text === '(' && function_exists($name) => new \ReflectionFunction($name),
                    class_exists($name) || interface_exists($name) => new \ReflectionClass($name),
                    default => null,
                };
                $extension = $reflection?->getExtensionName();
                if (is_string($extension) && !in_array(strtolower($extension), self::ALWAYS_THERE, true)) {
                    $used['ext-' . strtolower($extension)] = true;
                }
            }
        }
        return array_keys($used);
    }

    /** @param list<\PhpToken> $tokens */
    private static function neighbour(array $tokens, int $index, int $step): ?\PhpToken
    {
        for ($at = $index + $step; isset($tokens[$at]); $at += $step) {
            if (!$tokens[$at]->isIgnorable()) {
                return $tokens[$at];
            }
        }
        return null;
    }

    public function testComposerDeclaresExactlyTheExtensionsTheLibraryUses(): void
    {
        $declared = array_values(array_filter(array_keys(self::composer()['require']), static fn (string $name): bool => str_starts_with($name, 'ext-')));
        // The SQL is MariaDB's (UTC_TIMESTAMP, ON DUPLICATE KEY UPDATE), and EventConsumer refuses another driver.
        $expected = array_merge(self::extensionsUsedBySource(), ['ext-pdo_mysql']);
        sort($declared);
        sort($expected);
        self::assertSame($expected, $declared);
        self::assertContains('ext-ctype', $expected, 'Client reads Retry-After with ctype_digit');
    }

    public function testComposerStatesTheLicenceAndAPhpRangeWithAnUpperBound(): void
    {
        $composer = self::composer();
        self::assertSame('Apache-2.0', $composer['license']);
        // A caret range: from the version the code needs up to, not including, the next major version.
        self::assertMatchesRegularExpression('/\A\^8\.[0-9]+\z/', $composer['require']['php']);
        self::assertTrue(version_compare(PHP_VERSION, substr($composer['require']['php'], 1), '>='), 'the PHP running the tests is in range');
    }

    public function testThePhpunitConfigurationNamesTheSchemaOfThisPhpunitAndIsValid(): void
    {
        $configuration = new \DOMDocument();
        $configuration->load(self::ROOT . '/phpunit.xml.dist');
        $location = $configuration->documentElement->getAttributeNS('http://www.w3.org/2001/XMLSchema-instance', 'noNamespaceSchemaLocation');
        self::assertSame('https://schema.phpunit.de/' . Version::series() . '/phpunit.xsd', $location);
        self::assertTrue($configuration->schemaValidate((new SchemaFinder())->find(Version::series())));
    }

    public function testTheTestsThatNeedTheStackAreASuiteOfTheirOwn(): void
    {
        $configuration = simplexml_load_file(self::ROOT . '/phpunit.xml.dist');
        $suites = [];
        foreach ($configuration->testsuites->testsuite as $suite) {
            $suites[(string) $suite['name']] = (string) $suite->directory;
        }
        self::assertSame(['offline' => 'tests/Offline', 'integration' => 'tests/Integration'], $suites);
        foreach (glob(self::ROOT . '/tests/Offline/*.php') as $test) {
            self::assertStringNotContainsString('use ' . \IapFcgi\Tests\Stack::class . ';', (string) file_get_contents($test), basename($test) . ' needs no server');
        }
    }
}
