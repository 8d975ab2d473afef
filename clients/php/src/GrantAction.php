<?php

declare(strict_types=1);

namespace IapFcgi;

/** What an event asks of the game's inventory. */
enum GrantAction: string
{
    /** `delivered`: add the goods. */
    case Grant = 'grant';
    /**
     * `refunded`: remove Grant::quantity() of the goods (all of them unless the store refunded a part:
     * Apple a share of the price, Google some of the quantity).
     */
    case TakeBack = 'take_back';
    /**
     * `refund_reversed`: give back what the `refunded` event of the same transaction took back. The
     * service clears the revocation on a reversal, so the game's own record of that take-back says how much.
     */
    case GiveBack = 'give_back';
    /**
     * `refund_requested`: nothing changes yet; answer with the consumption (ConsumptionReporter).
     * `subscription_changed`: nothing to grant (EventConsumer calls onSubscriptionChanged instead).
     */
    case None = 'none';
}
