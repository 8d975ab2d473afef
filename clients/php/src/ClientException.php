<?php

declare(strict_types=1);

namespace IapFcgi;

/** Anything Client could not turn into a typed answer; catch this for all of them. */
class ClientException extends \RuntimeException
{
}
