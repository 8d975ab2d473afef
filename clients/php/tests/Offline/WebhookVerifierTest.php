<?php

declare(strict_types=1);

namespace IapFcgi\Tests\Offline;

use IapFcgi\EventType;
use IapFcgi\WebhookException;
use IapFcgi\WebhookVerifier;
use PHPUnit\Framework\TestCase;

/** X-IAP-Signature as iap-fcgi writes it (WebhookSignature.swift), checked without a server. */
final class WebhookVerifierTest extends TestCase
{
    private const SECRET = 'whsec-php-0123456789abcdef';
    private const NOW = 1_795_852_800;

    public static function body(array $transaction = [], array $extra = []): string
    {
        return json_encode([
            'event_id' => 42, 'type' => 'delivered', 'occurred_at' => '2026-11-28T08:00:00Z', 'environment' => 'Production',
            'transaction' => $transaction + [
                'transaction_id' => '1000000000000042', 'original_transaction_id' => '1000000000000042',
                'product_id' => 'zydj.product.pay_6', 'quantity' => 1, 'purchase_date' => '2026-11-28T07:59:00Z', 'state' => 'delivered',
            ],
            'order' => ['order_id' => '5b0c3c8e-1111-4c4c-9d9d-000000000042', 'user_id' => 'u-42', 'product_id' => 'zydj.product.pay_6',
                        'price' => '6.00', 'currency' => 'CNY', 'status' => 'delivered'],
        ] + $extra, JSON_THROW_ON_ERROR);
    }

    public static function header(string $body, string $secret = self::SECRET, int $time = self::NOW): string
    {
        return "t=$time,v1=" . hash_hmac('sha256', "$time.$body", $secret);
    }

    private static function verifier(string|array $secrets = self::SECRET): WebhookVerifier
    {
        return new WebhookVerifier($secrets, 300, static fn (): int => self::NOW);
    }

    private static function refusal(callable $verify): string
    {
        try {
            $verify();
        } catch (WebhookException $error) {
            return $error->reason;
        }
        return 'accepted';
    }

    public function testAValidSignatureGivesTheEvent(): void
    {
        $body = self::body();
        $event = self::verifier()->verify($body, self::header($body));
        self::assertSame(42, $event->eventId);
        self::assertSame(EventType::Delivered, $event->type);
        self::assertSame('u-42', $event->userId);
        self::assertSame('zydj.product.pay_6', $event->productId);
        self::assertSame(1, $event->quantity);
        self::assertNull($event->revocationPercentage);
        self::assertNull($event->refundRequest);
    }

    /** @return array<string, array{string, string}> body, header => the refusal's reason */
    public static function refusedPosts(): array
    {
        $body = self::body();
        $header = self::header($body);
        $flipped = substr($header, 0, -1) . (str_ends_with($header, '0') ? '1' : '0');
        return [
            'body changed after signing' => [str_replace('"quantity":1', '"quantity":9', $body), $header],
            'signature changed' => [$body, $flipped],
            'signed with another secret' => [$body, self::header($body, 'whsec-someone-else-000000')],
            'signed 301 s ago' => [$body, self::header($body, time: self::NOW - 301)],
            'signed 301 s ahead' => [$body, self::header($body, time: self::NOW + 301)],
            'the time changed after signing' => [$body, str_replace('t=' . self::NOW, 't=' . (self::NOW - 1), $header)],
            'no v1' => [$body, 't=' . self::NOW],
            'no t' => [$body, substr($header, strpos($header, ',') + 1)],
            't not a number' => [$body, str_replace('t=' . self::NOW, 't=soon', $header)],
            'empty header' => [$body, ''],
        ];
    }

    /** @dataProvider refusedPosts */
    public function testATamperedOrStalePostIsRefused(string $body, string $header): void
    {
        $expected = match (true) {
            $header === '' => WebhookException::MISSING_SIGNATURE,
            !str_contains($header, 'v1=') || !str_contains($header, 't='), str_contains($header, 't=soon') => WebhookException::MALFORMED_SIGNATURE,
            abs((int) substr($header, 2, 10) - self::NOW) > 300 => WebhookException::TIMESTAMP_OUTSIDE_TOLERANCE,
            default => WebhookException::SIGNATURE_MISMATCH,
        };
        self::assertSame($expected, self::refusal(static fn () => self::verifier()->verify($body, $header)));
    }

    public function testAMissingHeaderIsRefused(): void
    {
        self::assertSame(WebhookException::MISSING_SIGNATURE, self::refusal(static fn () => self::verifier()->verify(self::body(), null)));
    }

    public function testTheEdgeOfTheToleranceStillPasses(): void
    {
        $body = self::body();
        self::assertSame(42, self::verifier()->verify($body, self::header($body, time: self::NOW - 300))->eventId);
    }

    public function testDuringARotationEitherSecretPassesAndNoOther(): void
    {
        $body = self::body();
        $rotating = self::verifier(['whsec-new-secret-0000000000', self::SECRET]);
        self::assertSame(42, $rotating->verify($body, self::header($body))->eventId);
        self::assertSame(42, $rotating->verify($body, self::header($body, 'whsec-new-secret-0000000000'))->eventId);
        self::assertSame(WebhookException::SIGNATURE_MISMATCH,
            self::refusal(static fn () => $rotating->verify($body, self::header($body, 'whsec-retired-secret-000000'))));
    }

    public function testASignedBodyThatIsNotAnEventIsRefused(): void
    {
        foreach (['not json', '[1, 2]', '{"event_id": 1}', str_replace('"type":"delivered"', '"type":7', self::body())] as $body) {
            self::assertSame(WebhookException::INVALID_BODY, self::refusal(static fn () => self::verifier()->verify($body, self::header($body))), $body);
        }
    }

    public function testARefundAndARefundRequestCarryTheirDetails(): void
    {
        $refund = str_replace('"delivered"', '"refunded"', self::body(
            ['revocation_reason' => 0, 'revocation_type' => 'REFUND_PRORATED', 'revocation_percentage' => 40000, 'state' => 'refunded'],
        ));
        $event = self::verifier()->verify($refund, self::header($refund));
        self::assertSame([EventType::Refunded, 0, 'REFUND_PRORATED', 40000],
            [$event->type, $event->revocationReason, $event->revocationType, $event->revocationPercentage]);

        $request = str_replace('"type":"delivered"', '"type":"refund_requested"', self::body(
            extra: ['refund_request' => ['reason' => 'UNINTENDED_PURCHASE', 'deadline_at' => '2026-11-28T20:00:00Z']],
        ));
        $event = self::verifier()->verify($request, self::header($request));
        self::assertSame(EventType::RefundRequested, $event->type);
        self::assertSame('UNINTENDED_PURCHASE', $event->refundRequest?->reason);
        self::assertSame('2026-11-28T20:00:00Z', $event->refundRequest?->deadlineAt);
    }

    public function testAGooglePartialRefundSaysItsStoreAndHowManyItTookBack(): void
    {
        $refund = str_replace('"type":"delivered"', '"type":"refunded","store":"google_play"', self::body(
            ['transaction_id' => 'GPA.3312-4567-8901-23456', 'quantity' => 5, 'revocation_percentage' => null, 'refunded_quantity' => 2],
        ));
        $event = self::verifier()->verify($refund, self::header($refund));
        self::assertSame([EventType::Refunded, 'google_play', 'GPA.3312-4567-8901-23456', 5, 2, null],
            [$event->type, $event->store, $event->transactionId, $event->quantity, $event->refundedQuantity, $event->revocationPercentage]);

        $apple = self::verifier()->verify(self::body(), self::header(self::body()));
        self::assertSame(['app_store', null, null], [$apple->store, $apple->refundedQuantity, $apple->subscription],
            'a body without store (an older iap-fcgi) is Apple\'s');
    }

    public function testASubscriptionChangeCarriesTheChain(): void
    {
        $chain = ['status' => 'grace_period', 'expires_at' => '2026-12-28T08:00:00Z', 'auto_renew' => false,
                  'original_transaction_id' => '1000000000000040'];
        $changed = str_replace('"type":"delivered"', '"type":"subscription_changed","store":"app_store"',
            self::body(extra: ['subscription' => $chain]));
        $event = self::verifier()->verify($changed, self::header($changed));
        self::assertSame(EventType::SubscriptionChanged, $event->type);
        self::assertSame(array_values($chain), [$event->subscription?->status, $event->subscription?->expiresAt,
            $event->subscription?->autoRenew, $event->subscription?->originalTransactionId]);

        $unknown = str_replace('"type":"delivered"', '"type":"subscription_changed"',
            self::body(extra: ['subscription' => ['status' => 'active', 'expires_at' => null, 'auto_renew' => null,
                                                  'original_transaction_id' => '1000000000000040']]));
        $event = self::verifier()->verify($unknown, self::header($unknown));
        self::assertSame(['active', null, null], [$event->subscription?->status, $event->subscription?->expiresAt, $event->subscription?->autoRenew]);

        $wrong = str_replace('"type":"delivered"', '"type":"subscription_changed"',
            self::body(extra: ['subscription' => ['status' => 'active', 'auto_renew' => 'yes', 'original_transaction_id' => '1']]));
        self::assertSame(WebhookException::INVALID_BODY, self::refusal(static fn () => self::verifier()->verify($wrong, self::header($wrong))));
    }

    /**
     * A newer iap-fcgi may send a type this library does not know yet: the POST is genuine, so it is
     * verified (EventConsumer records and skips it) rather than refused and sent again for 72 hours.
     */
    public function testAnEventOfATypeThisLibraryDoesNotKnowIsVerifiedWithItsName(): void
    {
        $body = str_replace('"type":"delivered"', '"type":"gift_received"', self::body());
        $event = self::verifier()->verify($body, self::header($body));
        self::assertSame([42, null, 'gift_received', 'u-42'], [$event->eventId, $event->type, $event->typeName, $event->userId]);
        self::assertSame('delivered', self::verifier()->verify(self::body(), self::header(self::body()))->typeName);

        $other = json_encode(['event_id' => 43, 'type' => 'gift_received', 'gift' => ['from' => 'u-1']]);
        $event = self::verifier()->verify($other, self::header($other));
        self::assertSame([43, null, 'gift_received', ''], [$event->eventId, $event->type, $event->typeName, $event->userId]);
    }

    /** @return array<string, array{string|array<mixed>, string}> the secrets => what the refusal must name */
    public static function unusableSecrets(): array
    {
        return [
            'getenv() of a variable php-fpm cleared' => [[false], 'getenv()'],
            'env() under a cached Laravel config' => [[null], 'null'],
            'the old secret unset during a rotation' => [['whsec-new-secret-0000000000', false], 'secret 2 of 2 is false'],
            'an empty string' => ['', 'empty'],
            'an empty one in the list' => [[''], 'empty'],
            'none' => [[], 'no secret'],
            'a number' => [[1234567890123456789], 'int'],
            'shorter than iap-fcgi accepts' => [['whsec-short'], '16'],
        ];
    }

    /**
     * @dataProvider unusableSecrets
     * @param string|array<mixed> $secrets
     */
    public function testAnUnusableSecretIsRefusedWhenTheVerifierIsMade(string|array $secrets, string $cause): void
    {
        try {
            new WebhookVerifier($secrets);
        } catch (\InvalidArgumentException $error) {
            self::assertStringContainsString($cause, $error->getMessage());
            return;
        }
        self::fail('the verifier was made');
    }
}
