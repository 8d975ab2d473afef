<?php

declare(strict_types=1);

namespace IapFcgi\Tests\Integration;

use IapFcgi\ConsumptionReporter;
use IapFcgi\Event;
use IapFcgi\EventType;
use IapFcgi\Tests\Stack;
use PDO;
use PHPUnit\Framework\TestCase;

/** Consent and consumption in the stack's tables (sql/014), and the refund_requested answer. */
final class ConsumptionReporterTest extends TestCase
{
    private PDO $pdo;
    private ConsumptionReporter $reporter;

    protected function setUp(): void
    {
        $this->pdo = Stack::pdo();
        $this->reporter = new ConsumptionReporter();
    }

    public function testConsentIsRecordedWithdrawnAndGivenAgain(): void
    {
        $userId = Stack::newUserId();
        self::assertFalse($this->reporter->hasConsent($this->pdo, $userId));
        self::assertFalse($this->reporter->withdrawConsent($this->pdo, $userId), 'nothing to withdraw');

        $this->reporter->recordConsent($this->pdo, $userId);
        self::assertTrue($this->reporter->hasConsent($this->pdo, $userId));
        $row = $this->pdo->query("SELECT consented_at, withdrawn_at FROM consumption_consent WHERE user_id = '$userId'")->fetch(PDO::FETCH_ASSOC);
        self::assertNotNull($row['consented_at']);
        self::assertNull($row['withdrawn_at']);

        self::assertTrue($this->reporter->withdrawConsent($this->pdo, $userId));
        self::assertFalse($this->reporter->hasConsent($this->pdo, $userId));

        // Given again a moment later (a row's times are milliseconds: wait for the next one, by the database's clock).
        $withdrawn = $this->pdo->query("SELECT withdrawn_at FROM consumption_consent WHERE user_id = '$userId'")->fetchColumn();
        Stack::waitUntil(fn (): bool => $this->pdo->query("SELECT UTC_TIMESTAMP(3) > '$withdrawn'")->fetchColumn() == 1, 10, 'the next millisecond');
        $this->reporter->recordConsent($this->pdo, $userId);
        self::assertTrue($this->reporter->hasConsent($this->pdo, $userId));
    }

    public function testConsumptionIsRecordedAndReplacedWithinRange(): void
    {
        $transactionId = '1000000' . random_int(100000000, 999999999);
        self::assertNull($this->reporter->consumption($this->pdo, $transactionId));
        $this->reporter->recordConsumption($this->pdo, $transactionId, 25000);
        self::assertSame(25000, $this->reporter->consumption($this->pdo, $transactionId));
        $this->reporter->recordConsumption($this->pdo, $transactionId, 100000);
        self::assertSame(100000, $this->reporter->consumption($this->pdo, $transactionId));

        foreach ([-1, 100001] as $outOfRange) {
            try {
                $this->reporter->recordConsumption($this->pdo, $transactionId, $outOfRange);
                self::fail("$outOfRange was accepted");
            } catch (\InvalidArgumentException) {
            }
        }
        self::assertSame(100000, $this->reporter->consumption($this->pdo, $transactionId), 'unchanged by the refused values');
    }

    public function testTheAnswerToARefundRequest(): void
    {
        self::assertSame('{"consumption_percentage":40000}', $this->reporter->answer(40000));
        self::assertSame(['consumption_percentage' => 0], json_decode($this->reporter->answer(0), true));

        $transactionId = '1000000' . random_int(100000000, 999999999);
        $event = new Event(1, EventType::RefundRequested, '2026-11-28T08:00:00Z', 'Production', $transactionId, $transactionId,
            'order-1', 'u-1', Stack::PAY_6, 1);
        self::assertNull($this->reporter->answerFromRecord($this->pdo, $event), 'nothing recorded: answer 204');
        $this->reporter->recordConsumption($this->pdo, $transactionId, 75000);
        self::assertSame('{"consumption_percentage":75000}', $this->reporter->answerFromRecord($this->pdo, $event));

        $this->expectException(\InvalidArgumentException::class);
        $this->reporter->answer(100001);
    }
}
