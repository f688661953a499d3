-- The scans already folded into the stats rollups (rowid up to the watermark) counted per hostname; the roller keeps the counts from here on.
INSERT INTO `scan_hostname_rollups` (`hostname`, `scans`, `last_scanned_at`)
SELECT `hostname`, count(*), max(`scanned_at`) FROM `scans`
WHERE `rowid` <= (SELECT coalesce(max(`watermark`), 0) FROM `scan_rollup_state`)
GROUP BY `hostname`;
