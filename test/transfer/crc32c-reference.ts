// CRC32C computed apart from src/: the tests that check a download's checksum build their
// x-goog-hash with this, so a wrong table in src/transfer/crc32c.ts fails them instead of
// agreeing with itself.

/** CRC32C one bit at a time, straight from the definition: no table, nothing shared with the module. */
export function referenceCrc32c(bytes: Uint8Array): number {
  let crc = 0xffffffff;
  for (const byte of bytes) {
    crc ^= byte;
    for (let bit = 0; bit < 8; bit++) crc = crc & 1 ? (crc >>> 1) ^ 0x82f63b78 : crc >>> 1;
  }
  return (crc ^ 0xffffffff) >>> 0;
}

/** The `x-goog-hash` value Cloud Storage sends for `data`: its CRC32C as the base64 of 4 big-endian bytes. */
export function googHash(data: Uint8Array): string {
  const crc = referenceCrc32c(data);
  return `crc32c=${btoa(String.fromCharCode(crc >>> 24, (crc >>> 16) & 0xff, (crc >>> 8) & 0xff, crc & 0xff))}`;
}
