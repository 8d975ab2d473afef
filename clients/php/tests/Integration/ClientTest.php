<?php

declare(strict_types=1);

namespace IapFcgi\Tests\Integration;

use IapFcgi\ApiException;
use IapFcgi\Client;
use IapFcgi\ServiceUnavailableException;
use IapFcgi\Tests\Stack;
use IapFcgi\TransportException;
use PHPUnit\Framework\TestCase;

/**
 * Client against the real service through nginx, and against a `php -S` in front of it that answers
 * 503 (Fixtures/unavailable_server.php) for Retry-After and the retry bound.
 */
final class ClientTest extends TestCase
{
    /** @var resource */
    private static $server;
    private static string $serverUrl;
    private static string $log;

    public static function setUpBeforeClass(): void
    {
        self::$log = tempnam(sys_get_temp_dir(), 'iap-php-unavailable-');
        [self::$server, self::$serverUrl] = Stack::startPhpServer(__DIR__ . '/../Fixtures/unavailable_server.php', ['UNAVAILABLE_LOG' => self::$log]);
    }

    public static function tearDownAfterClass(): void
    {
        Stack::stopPhpServer(self::$server);
        unlink(self::$log);
    }

    protected function setUp(): void
    {
        file_put_contents(self::$log, '');
    }

    /** @return list<string> the paths the fixture server saw */
    private static function requestsSeen(): array
    {
        return file(self::$log, FILE_IGNORE_NEW_LINES);
    }

    public function testAnOrderThenItsReceiptDeliveredOnce(): void
    {
        $client = new Client(Stack::baseUrl());
        $userId = Stack::newUserId();
        $order = $client->createOrder($userId, Stack::PAY_6, '6.00');
        self::assertMatchesRegularExpression('/\A[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}\z/', $order->orderId);
        self::assertSame([$userId, Stack::PAY_6, '6.00', 'created'], [$order->userId, $order->productId, $order->price, $order->status]);

        $receipt = Stack::appReceipt(Stack::PAY_6);
        $first = $client->verifyReceipt($receipt['receipt_data'], orderId: $order->orderId);
        self::assertTrue($first->isDelivered());
        self::assertTrue($first->finishTransaction);
        self::assertSame($order->orderId, $first->orderId);
        self::assertSame(0, $first->appleStatus);
        self::assertSame($receipt['purchases'][0]['transaction_id'], $first->transactions[0]->transactionId);
        self::assertSame('delivered', $first->transactions[0]->state);

        $again = $client->verifyReceipt($receipt['receipt_data'], orderId: $order->orderId);
        self::assertSame(['already_delivered', 1, true], [$again->status, $again->code, $again->finishTransaction]);
    }

    /** A purchase bought at the stack's Google Play double (GOOGLE_SIM_CONTROL_URL), verified through the service. */
    public function testAGooglePlayPurchaseDeliveredOnce(): void
    {
        $bought = Stack::googlePurchase(quantity: 2);
        $client = new Client(Stack::baseUrl());
        $userId = Stack::newUserId();
        $first = $client->verifyGooglePurchase(Stack::GOOGLE_PACKAGE, Stack::PAY_6, $bought['purchase_token'], userId: $userId);
        self::assertSame(['delivered', 'google_play', true], [$first->status, $first->store, $first->finishTransaction]);
        self::assertSame([$bought['order_id'], 2, 'delivered'],
            [$first->transactions[0]->transactionId, $first->transactions[0]->quantity, $first->transactions[0]->state]);

        $again = $client->verifyGooglePurchase(Stack::GOOGLE_PACKAGE, Stack::PAY_6, $bought['purchase_token'], userId: Stack::newUserId());
        self::assertSame(['already_delivered', 'google_play'], [$again->status, $again->store]);
        self::assertSame('app_store', $client->verifyReceipt(Stack::appReceipt(Stack::PAY_6)['receipt_data'], userId: $userId)->store);
    }

    /** @return array<string, array{callable(Client): mixed, int, string}> */
    public static function refusals(): array
    {
        return [
            'unknown product' => [static fn (Client $client) => $client->createOrder('u-1', 'no.such.product'), 404, 'unknown_product'],
            'price not the catalog\'s' => [static fn (Client $client) => $client->createOrder('u-1', Stack::PAY_6, '0.01'), 422, 'price_mismatch'],
            'receipt not base64' => [static fn (Client $client) => $client->verifyReceipt('***', userId: 'u-1'), 400, 'invalid_receipt_data'],
            'JWS that is not one' => [static fn (Client $client) => $client->verifyTransaction('a.b.c', userId: 'u-1'), 400, 'invalid_signed_data'],
            'neither JWS nor id' => [static fn (Client $client) => $client->verifyTransaction(userId: 'u-1'), 400, 'missing_field'],
        ];
    }

    /** @dataProvider refusals */
    public function testA4xxIsAnApiExceptionWithTheContractsCode(callable $call, int $status, string $code): void
    {
        try {
            $call(new Client(Stack::baseUrl()));
            self::fail('no exception');
        } catch (ApiException $error) {
            self::assertSame([$status, $code], [$error->httpStatus, $error->errorCode], $error->getMessage());
        }
    }

    public function testA503IsSentAgainAfterItsRetryAfter(): void
    {
        $waits = [];
        $client = new Client(self::$serverUrl . '/once', sleep: static function (int $seconds) use (&$waits): void {
            $waits[] = $seconds;
            sleep($seconds);
        });
        $order = $client->createOrder(Stack::newUserId(), Stack::PAY_6);
        self::assertSame('created', $order->status, 'the second attempt reached the service');
        self::assertSame([1], $waits, 'waited the Retry-After once');
        self::assertSame(['/once/v1/orders', '/once/v1/orders'], self::requestsSeen());
    }

    public function testRetriesAreBounded(): void
    {
        $waits = [];
        $client = new Client(self::$serverUrl . '/always', maxRetries: 2, sleep: static function (int $seconds) use (&$waits): void {
            $waits[] = $seconds;
        });
        try {
            $client->verifyReceipt('AAAA', userId: 'u-1');
            self::fail('no exception');
        } catch (ServiceUnavailableException $error) {
            self::assertSame([1, 3], [$error->retryAfterSeconds, $error->attempts]);
        }
        self::assertSame([1, 1], $waits);
        self::assertCount(3, self::requestsSeen());
    }

    public function testARetryAfterLongerThanTheLimitIsNotWaitedFor(): void
    {
        $client = new Client(self::$serverUrl . '/long', maxRetryAfterSeconds: 10, sleep: static function (): void {
            self::fail('waited');
        });
        try {
            $client->createOrder('u-1', Stack::PAY_6);
            self::fail('no exception');
        } catch (ServiceUnavailableException $error) {
            self::assertSame([3600, 1], [$error->retryAfterSeconds, $error->attempts]);
        }
    }

    public function testATimeoutIsATransportException(): void
    {
        $client = new Client(self::$serverUrl . '/slow', timeoutSeconds: 0.5);
        try {
            $client->createOrder('u-1', Stack::PAY_6);
            self::fail('no exception');
        } catch (TransportException $error) {
            self::assertTrue($error->isTimeout(), $error->getMessage());
        }
    }
}
