<?php

declare(strict_types=1);

// The game's webhook endpoint as clients/php/README.md writes it, served by `php -S` in
// Tests/e2e/test_php_webhook.py: iap-fcgi POSTs each event here. Grants go to the test's table
// php_webhook_grants (one row per grant the callable made, and one per subscription change the
// game's handler was told of, with the chain's new status). Configured by the environment:
// GAME_WEBHOOK_SECRETS (comma-separated: a rotation) and the stack's IAP_DB_* variables.
require __DIR__ . '/../autoload.php';

use IapFcgi\ConsumptionReporter;
use IapFcgi\Event;
use IapFcgi\EventConsumer;
use IapFcgi\EventType;
use IapFcgi\Grant;
use IapFcgi\Tests\Stack;
use IapFcgi\WebhookException;
use IapFcgi\WebhookVerifier;

$verifier = new WebhookVerifier(explode(',', (string) getenv('GAME_WEBHOOK_SECRETS')));
try {
    $event = $verifier->verify(file_get_contents('php://input'), $_SERVER['HTTP_X_IAP_SIGNATURE'] ?? null);
} catch (WebhookException $error) {
    http_response_code(401);
    echo $error->reason;
    return;
}

$record = static function (PDO $pdo, Event $event, string $action, ?int $shareMilli, ?string $quantity, ?string $detail): void {
    $pdo->prepare('INSERT INTO php_webhook_grants (event_id, user_id, product_id, action, share_milli, quantity, detail) VALUES (?, ?, ?, ?, ?, ?, ?)')
        ->execute([$event->eventId, $event->userId, $event->productId, $action, $shareMilli, $quantity, $detail]);
};
$pdo = Stack::pdo();
$consumer = new EventConsumer(onSubscriptionChanged: static function (Event $event, PDO $pdo) use ($record): void {
    $record($pdo, $event, $event->typeName, null, null, $event->subscription?->status);
});
$consumer->consumeEvent($pdo, $event, static function (Grant $grant, PDO $pdo) use ($record): void {
    $record($pdo, $grant->event, $grant->action->value, $grant->shareMilli, var_export($grant->quantity(), true), $grant->event->store);
});

$answer = $event->type === EventType::RefundRequested ? (new ConsumptionReporter())->answerFromRecord($pdo, $event) : null;
if ($answer === null) {
    http_response_code(204);
} else {
    header('Content-Type: application/json');
    echo $answer;
}
