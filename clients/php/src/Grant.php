<?php

declare(strict_types=1);

namespace IapFcgi;

/** What EventConsumer hands the game's grant callable for one claimed event. */
final class Grant
{
    /** 100 % in Apple's milliunits. */
    public const WHOLE_MILLI = 100000;

    private function __construct(
        public readonly Event $event,
        public readonly GrantAction $action,
        /** Share of the goods the action applies to, 0-100000 (milliunits); null for GiveBack. */
        public readonly ?int $shareMilli,
    ) {
    }

    /** @throws \InvalidArgumentException for a type this library does not know (EventConsumer skips those) */
    public static function of(Event $event): self
    {
        return match ($event->type) {
            null => throw new \InvalidArgumentException("no grant for an event of type \"$event->typeName\": this library does not know it"),
            EventType::Delivered => new self($event, GrantAction::Grant, self::WHOLE_MILLI),
            EventType::Refunded => new self($event, GrantAction::TakeBack, self::refundedShare($event)),
            EventType::RefundReversed => new self($event, GrantAction::GiveBack, null),
            EventType::RefundRequested => new self($event, GrantAction::None, 0),
        };
    }

    /** The share as a fraction, 0.0-1.0 (0.4 for 40000); null for GiveBack. */
    public function share(): ?float
    {
        return $this->shareMilli === null ? null : $this->shareMilli / self::WHOLE_MILLI;
    }

    /** A refund takes back everything unless Apple says it refunded a part (REFUND_PRORATED). */
    private static function refundedShare(Event $event): int
    {
        $percentage = $event->revocationPercentage;
        return $percentage === null ? self::WHOLE_MILLI : max(0, min(self::WHOLE_MILLI, $percentage));
    }
}
