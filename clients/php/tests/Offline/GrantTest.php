<?php

declare(strict_types=1);

namespace IapFcgi\Tests\Offline;

use IapFcgi\Event;
use IapFcgi\EventType;
use IapFcgi\Grant;
use IapFcgi\GrantAction;
use PHPUnit\Framework\TestCase;

/** What each event type asks of the inventory, and how much of it. */
final class GrantTest extends TestCase
{
    private static function event(EventType $type, ?int $revocationPercentage = null): Event
    {
        return new Event(7, $type, '2026-11-28T08:00:00Z', 'Production', '1000000000000007', '1000000000000007',
            'order-7', 'u-7', 'zydj.product.pay_6', 1, revocationPercentage: $revocationPercentage);
    }

    /** @return array<string, array{EventType, ?int, GrantAction, ?int, ?float}> */
    public static function cases(): array
    {
        return [
            'delivered: all of it' => [EventType::Delivered, null, GrantAction::Grant, 100000, 1.0],
            'refunded in full' => [EventType::Refunded, null, GrantAction::TakeBack, 100000, 1.0],
            'refunded 40 %' => [EventType::Refunded, 40000, GrantAction::TakeBack, 40000, 0.4],
            'refunded, a share out of range is clamped' => [EventType::Refunded, 250000, GrantAction::TakeBack, 100000, 1.0],
            'refund reversed: what the refund took' => [EventType::RefundReversed, null, GrantAction::GiveBack, null, null],
            'refund requested: nothing yet' => [EventType::RefundRequested, null, GrantAction::None, 0, 0.0],
        ];
    }

    /** @dataProvider cases */
    public function testEachEventType(EventType $type, ?int $percentage, GrantAction $action, ?int $shareMilli, ?float $share): void
    {
        $grant = Grant::of(self::event($type, $percentage));
        self::assertSame([$action, $shareMilli, $share], [$grant->action, $grant->shareMilli, $grant->share()]);
    }

    public function testATypeThisLibraryDoesNotKnowHasNoGrant(): void
    {
        $event = new Event(7, 'subscription_changed', '2026-11-28T08:00:00Z', 'Production', '1000000000000007', '1000000000000007',
            'order-7', 'u-7', 'zydj.product.pay_6', 1);
        self::assertSame([null, 'subscription_changed'], [$event->type, $event->typeName]);
        $this->expectExceptionMessage('no grant for an event of type "subscription_changed"');
        Grant::of($event);
    }
}
