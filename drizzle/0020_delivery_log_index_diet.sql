DROP INDEX `order_signals_store_idx`;--> statement-breakpoint
DROP INDEX `webhook_deliveries_store_idx`;