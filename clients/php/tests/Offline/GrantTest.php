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
    private static function event(EventType $type, ?int $revocationPercentage = null, int $quantity = 1, ?int $refundedQuantity = null): Event
    {
        return new Event(7, $type, '2026-11-28T08:00:00Z', 'Production', '1000000000000007', '1000000000000007',
            'order-7', 'u-7', 'zydj.product.pay_6', $quantity, revocationPercentage: $revocationPercentage,
            store: $refundedQuantity === null ? 'app_store' : 'google_play', refundedQuantity: $refundedQuantity);
    }

    /** @return array<string, array{Event, GrantAction, ?int, ?float, int|float|null}> */
    public static function cases(): array
    {
        return [
            'delivered: all of it' => [self::event(EventType::Delivered, quantity: 3), GrantAction::Grant, 100000, 1.0, 3],
            'refunded in full' => [self::event(EventType::Refunded), GrantAction::TakeBack, 100000, 1.0, 1],
            'refunded 40 %' => [self::event(EventType::Refunded, 40000), GrantAction::TakeBack, 40000, 0.4, 0.4],
            'refunded, a share out of range is clamped' => [self::event(EventType::Refunded, 250000), GrantAction::TakeBack, 100000, 1.0, 1],
            'Google: 2 of 5 refunded' => [self::event(EventType::Refunded, quantity: 5, refundedQuantity: 2), GrantAction::TakeBack, 40000, 0.4, 2],
            'Google: 1 of 49 refunded, exactly 1' => [self::event(EventType::Refunded, quantity: 49, refundedQuantity: 1), GrantAction::TakeBack, 2041, 1 / 49, 1],
            'Google: more than bought is all of it' => [self::event(EventType::Refunded, quantity: 2, refundedQuantity: 3), GrantAction::TakeBack, 100000, 1.0, 2],
            'refund reversed: what the refund took' => [self::event(EventType::RefundReversed), GrantAction::GiveBack, null, null, null],
            'refund requested: nothing yet' => [self::event(EventType::RefundRequested), GrantAction::None, 0, 0.0, 0],
            'subscription changed: nothing to grant' => [self::event(EventType::SubscriptionChanged), GrantAction::None, 0, 0.0, 0],
        ];
    }

    /** @dataProvider cases */
    public function testEachEventType(Event $event, GrantAction $action, ?int $shareMilli, ?float $share, int|float|null $quantity): void
    {
        $grant = Grant::of($event);
        self::assertSame([$action, $shareMilli, $share, $quantity], [$grant->action, $grant->shareMilli, $grant->share(), $grant->quantity()]);
    }

    public function testATypeThisLibraryDoesNotKnowHasNoGrant(): void
    {
        $event = new Event(7, 'gift_received', '2026-11-28T08:00:00Z', 'Production', '1000000000000007', '1000000000000007',
            'order-7', 'u-7', 'zydj.product.pay_6', 1);
        self::assertSame([null, 'gift_received'], [$event->type, $event->typeName]);
        $this->expectExceptionMessage('no grant for an event of type "gift_received"');
        Grant::of($event);
    }
}
