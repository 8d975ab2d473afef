<?php

declare(strict_types=1);

namespace IapFcgi;

/**
 * EventConsumer's signal, between its own methods, that an event's grant threw and was recorded; the
 * grant's exception is the previous one.
 *
 * @internal
 */
final class GrantFailed extends \RuntimeException
{
    public function __construct(\Throwable $cause)
    {
        parent::__construct('the grant threw: ' . $cause->getMessage(), 0, $cause);
    }
}
