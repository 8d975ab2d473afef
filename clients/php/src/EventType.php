<?php

declare(strict_types=1);

namespace IapFcgi;

/** `events.type` (docs/events.md "The events"). */
enum EventType: string
{
    /** Grant the goods. */
    case Delivered = 'delivered';
    /** Take them back: all of them, or the share in the transaction's revocation_percentage. */
    case Refunded = 'refunded';
    /** Apple reversed the refund: give back what the refund took. */
    case RefundReversed = 'refund_reversed';
    /** The player asked Apple for a refund: nothing is taken back yet; answer with the consumption. */
    case RefundRequested = 'refund_requested';
}
