<?php

declare(strict_types=1);

// The package's PSR-4 map (composer.json) without Composer: the tests, the webhook endpoint the
// end-to-end test serves with `php -S`, and the racing consumer load the library through it.
spl_autoload_register(static function (string $class): void {
    $roots = ['IapFcgi\\Tests\\' => __DIR__ . '/', 'IapFcgi\\' => __DIR__ . '/../src/'];
    foreach ($roots as $prefix => $directory) {
        if (str_starts_with($class, $prefix)) {
            $file = $directory . str_replace('\\', '/', substr($class, strlen($prefix))) . '.php';
            if (is_file($file)) {
                require $file;
            }
            return;
        }
    }
});
