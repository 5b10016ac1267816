//! The cost of undoing a Content-Encoding, per decoder, for docs/performance.md: `content_coding DECODER
//! ROUNDS` encodes 1 MiB of JSON records (setup) and decodes it ROUNDS times. Run under callgrind with 0 and
//! with 10 rounds: the difference over 10 is one decode's instructions, whatever the machine's load.
//! DECODER: `gzip-zlib-rs` (flate2 on zlib-rs), `gzip-miniz` (miniz_oxide, flate2's other pure-Rust backend),
//! both inflating the gzip body's deflate stream, `br` (brotli-decompressor), `zstd` (libzstd).

use std::io::{Read, Write};

/// 1 MiB of JSON records, as an API answers: keys repeated, numbers and words varying.
fn corpus() -> Vec<u8> {
    let words = ["alpha", "bravo", "charlie", "delta", "echo", "foxtrot", "golf", "hotel"];
    let mut out = b"[".to_vec();
    let mut i: u64 = 0;
    while out.len() < 1 << 20 {
        let x = i.wrapping_mul(2654435761) % 100_000;
        let record = format!(
            r#"{{"id":{i},"name":"{} {}","score":{x},"active":{},"tags":["{}","{}"]}},"#,
            words[(x % 8) as usize],
            words[(i % 8) as usize],
            x.is_multiple_of(2),
            words[(x / 8 % 8) as usize],
            words[(x / 64 % 8) as usize],
        );
        out.extend_from_slice(record.as_bytes());
        i += 1;
    }
    out.push(b']');
    out
}

fn main() {
    let args: Vec<String> = std::env::args().collect();
    let decoder = args.get(1).map_or("gzip-zlib-rs", String::as_str);
    let rounds: u32 = args.get(2).and_then(|r| r.parse().ok()).unwrap_or(10);
    let plain = corpus();
    let encoded = match decoder {
        "gzip-zlib-rs" | "gzip-miniz" => {
            let mut e = flate2::write::GzEncoder::new(Vec::new(), flate2::Compression::new(6));
            e.write_all(&plain).unwrap();
            e.finish().unwrap()
        }
        "br" => {
            let mut out = Vec::new();
            let params = brotli::enc::BrotliEncoderParams { quality: 5, ..Default::default() };
            brotli::BrotliCompress(&mut &plain[..], &mut out, &params).unwrap();
            out
        }
        "zstd" => zstd::encode_all(&plain[..], 3).unwrap(),
        other => panic!("unknown decoder {other}"),
    };
    let mut total = 0;
    for _ in 0..rounds {
        let out = match decoder {
            // Both inflate the same raw deflate stream, into a buffer of the body's size, without the gzip
            // wrapper's CRC (the same for both): the gzip header is 10 bytes here, the trailer 8.
            "gzip-zlib-rs" => {
                let mut out = Vec::with_capacity(plain.len());
                let mut d = flate2::Decompress::new(false);
                d.decompress_vec(&encoded[10..encoded.len() - 8], &mut out, flate2::FlushDecompress::Finish).unwrap();
                out
            }
            "gzip-miniz" => {
                let mut out = vec![0; plain.len()];
                let flags = miniz_oxide::inflate::core::inflate_flags::TINFL_FLAG_USING_NON_WRAPPING_OUTPUT_BUF;
                let mut state = miniz_oxide::inflate::core::DecompressorOxide::new();
                let (_, _, n) = miniz_oxide::inflate::core::decompress(
                    &mut state,
                    &encoded[10..encoded.len() - 8],
                    &mut out,
                    0,
                    flags,
                );
                out.truncate(n);
                out
            }
            "br" => {
                let mut out = Vec::with_capacity(plain.len());
                brotli_decompressor::Decompressor::new(&encoded[..], 4096).read_to_end(&mut out).unwrap();
                out
            }
            _ => zstd::decode_all(&encoded[..]).unwrap(),
        };
        assert_eq!(out.len(), plain.len());
        total += out.len();
    }
    println!("{decoder}: {} bytes encoded from {}, {rounds} rounds, {total} bytes decoded", encoded.len(), plain.len());
}
