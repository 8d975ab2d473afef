<?php

declare(strict_types=1);

// The second consumer of EventConsumerTest's race, in a process of its own with its own connection:
// prints its connection id (the test waits until that connection's UPDATE waits for the row lock the
// first consumer holds), then `granted` if its grant ran, then `claimed=1` or `claimed=0`.
require __DIR__ . '/../autoload.php';

use IapFcgi\EventConsumer;
use IapFcgi\Tests\Stack;

[$userId, $eventId] = [$argv[1], (int) $argv[2]];
$pdo = Stack::pdo();
echo $pdo->query('SELECT CONNECTION_ID()')->fetchColumn(), "\n";
flush();
[$event] = array_values(array_filter(Stack::eventsOf($pdo, $userId), static fn ($event): bool => $event->eventId === $eventId));
$claimed = (new EventConsumer())->consumeEvent($pdo, $event, static function (): void {
    echo "granted\n";
});
echo 'claimed=', $claimed ? 1 : 0, "\n";
