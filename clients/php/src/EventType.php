<?php

declare(strict_types=1);

namespace IapFcgi;

/** `events.type` (docs/events.md "The events"). */
enum EventType: string
{
    /** Grant the goods. */
    case Delivered = 'delivered';
    /**
     * Take them back: all of them, or a part (Apple's revocation_percentage, Google's refunded_quantity:
     * Grant::quantity() says how many).
     */
    case Refunded = 'refunded';
    /** Apple reversed the refund: give back what the refund took. */
    case RefundReversed = 'refund_reversed';
    /** The player asked the store for a refund: nothing is taken back yet; answer with the consumption. */
    case RefundRequested = 'refund_requested';
    /**
     * A subscription chain's status, expiry or auto-renewal changed (Event::$subscription): nothing to
     * grant or take back (its renewals and refunds have their own events); EventConsumer hands it to
     * the game's onSubscriptionChanged.
     */
    case SubscriptionChanged = 'subscription_changed';
}
