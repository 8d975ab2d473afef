<?php

declare(strict_types=1);

namespace IapFcgi;

/** What a `refund_requested` event carries: Apple's reason and the time after which an answer is late. */
final class RefundRequest
{
    /**
     * @param string|null $reason Apple's consumptionRequestReason (UNINTENDED_PURCHASE, FULFILLMENT_ISSUE,
     *        UNSATISFIED_WITH_PURCHASE, LEGAL, OTHER); null when Apple gave none
     * @param string $deadlineAt ISO 8601 UTC, e.g. 2026-11-28T20:00:00Z
     */
    public function __construct(
        public readonly ?string $reason,
        public readonly string $deadlineAt,
    ) {
    }
}
