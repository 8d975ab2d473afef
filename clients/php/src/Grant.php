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
        /**
         * Share of the goods the action applies to, 0-100000 (milliunits; a Google partial refund's
         * share of the quantity, rounded); null for GiveBack.
         */
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
            EventType::RefundRequested, EventType::SubscriptionChanged => new self($event, GrantAction::None, 0),
        };
    }

    /**
     * The share as a fraction, 0.0-1.0 (0.4 for 40000; for a Google partial refund exactly the refunded
     * quantity over the quantity); null for GiveBack.
     */
    public function share(): ?float
    {
        $refunded = self::refundedQuantity($this->event);
        if ($this->action === GrantAction::TakeBack && $refunded !== null) {
            return $refunded / $this->event->quantity;
        }
        return $this->shareMilli === null ? null : $this->shareMilli / self::WHOLE_MILLI;
    }

    /**
     * How many of the event's `quantity` the action applies to: all of them for a grant or a full
     * refund; for a Google partial refund exactly its refunded quantity (2 of 5: 2); for Apple's
     * prorated refund the quantity times the share (40 % of 1: 0.4, the game rounds as it sees fit);
     * 0 for None; null for GiveBack (the game's record of the take-back says how much).
     */
    public function quantity(): int|float|null
    {
        return match (true) {
            $this->action === GrantAction::GiveBack => null,
            $this->action === GrantAction::TakeBack && self::refundedQuantity($this->event) !== null => self::refundedQuantity($this->event),
            $this->shareMilli === self::WHOLE_MILLI => $this->event->quantity,
            $this->shareMilli === 0 => 0,
            default => $this->event->quantity * $this->share(),
        };
    }

    /**
     * A refund takes back everything unless the store says it refunded a part: Apple a share of the
     * price (REFUND_PRORATED), Google some of the quantity.
     */
    private static function refundedShare(Event $event): int
    {
        $refunded = self::refundedQuantity($event);
        $percentage = $refunded === null ? $event->revocationPercentage
            : (int) round($refunded * self::WHOLE_MILLI / $event->quantity);
        return $percentage === null ? self::WHOLE_MILLI : max(0, min(self::WHOLE_MILLI, $percentage));
    }

    /** A Google partial refund's count, at most the quantity; null when the refund is not one. */
    private static function refundedQuantity(Event $event): ?int
    {
        return $event->refundedQuantity === null || $event->quantity < 1 ? null
            : max(0, min($event->quantity, $event->refundedQuantity));
    }
}
