// RLP encoding and decoding in one pass over one buffer, in place of @ethereumjs/rlp 10.1.3's `RLP.encode`
// and `RLP.decode`, which every ethereumjs package calls through that one shared `RLP` object (tries,
// blocks, transactions, receipts, accounts, BALs).
//
// Why: ethereumjs's encoder concatenates a new array at every level of a list, and its decoder copies each
// list's contents before reading its items, so a trie node is copied once per level it is nested in: RLP
// was a sixth of the CPU time of a batch of 30M fixtures, and a share of the garbage collector's. Here the
// encoder measures the whole item, then writes every header and byte string once into one array; the
// decoder reads with offsets into the input and copies each byte string once.
//
// Why the verdicts are unchanged: both answer the same bytes and the same items (each decoded byte string
// its own copy, as ethereumjs's is; an encoded single byte below 0x80 given alone is returned as given, as
// ethereumjs does). Anything outside the well-formed common case (input that is not bytes, a string that
// is not hex, a value ethereumjs would refuse, a list longer than 65,536 items, any malformed encoding at
// all) is handed whole to ethereumjs's own function, which answers or throws exactly as before.
// `useOnePassRlp` checks both against ethereumjs's on thousands of generated items and encodings, valid and
// corrupted, before it replaces them; BALGEN_ETHEREUMJS_OWN_RLP=1 (verify.mjs) keeps ethereumjs's.
import { RLP } from '@ethereumjs/rlp'

import { DIGIT_VALUES } from './hex_digits.mjs'

/** Thrown inside the one-pass functions where ethereumjs's own must answer: caught before it leaves them. */
const UNUSUAL = Symbol('rlp input left to ethereumjs')

const MAX_LIST_ITEMS = 65_536


/** The bytes of a hex string (an odd number of digits read with a leading 0), or UNUSUAL for any other character. */
function hexBytes(hex, start) {
  const digits = hex.length - start
  const bytes = new Uint8Array((digits + 1) >> 1)
  let at = bytes.length - 1
  for (let index = hex.length; index > start; index -= 2) {
    const low = hex.charCodeAt(index - 1)
    const high = index - 2 >= start ? hex.charCodeAt(index - 2) : 48
    const value = (low < 128 ? DIGIT_VALUES[low] : 255) | ((high < 128 ? DIGIT_VALUES[high] : 255) << 4)
    if (value > 255) throw UNUSUAL
    bytes[at--] = value
  }
  return bytes
}

/**
 * A scalar's bytes as ethereumjs's `toBytes` gives them, for the kinds it converts without error: bytes as
 * they are, a non-negative safe integer or bigint big-endian without leading zeros (zero: none), a
 * `0x` hex string's bytes, null or undefined none. Anything else is UNUSUAL.
 */
function scalarBytes(value) {
  if (value instanceof Uint8Array) return value
  if (typeof value === 'number') {
    if (!Number.isSafeInteger(value) || value < 0) throw UNUSUAL
    if (value === 0) return new Uint8Array(0)
    return hexBytes(value.toString(16), 0)
  }
  if (typeof value === 'bigint') {
    if (value < 0n) throw UNUSUAL
    if (value === 0n) return new Uint8Array(0)
    return hexBytes(value.toString(16), 0)
  }
  if (typeof value === 'string') {
    if (value.length < 2 || value[0] !== '0' || value[1] !== 'x') throw UNUSUAL
    return hexBytes(value, 2)
  }
  if (value === null || value === undefined) return new Uint8Array(0)
  throw UNUSUAL
}

/** How many bytes `length` takes big-endian without leading zeros. */
function lengthOfLength(length) {
  let bytes = 1
  while (length >= 256) {
    length = Math.floor(length / 256)
    bytes++
  }
  return bytes
}

/** The size of a header for a payload of `length` bytes. */
function headerSize(length) {
  return length < 56 ? 1 : 1 + lengthOfLength(length)
}

/**
 * `item`'s encoded size; `parts` gets, in writing order, each list's payload size (as -1 - size) and each
 * scalar's bytes.
 */
function measure(item, parts) {
  if (Array.isArray(item)) {
    if (item.length > MAX_LIST_ITEMS) throw UNUSUAL
    const at = parts.length
    parts.push(0)
    let payload = 0
    for (let index = 0; index < item.length; index++) payload += measure(item[index], parts)
    parts[at] = -1 - payload
    return headerSize(payload) + payload
  }
  const bytes = scalarBytes(item)
  parts.push(bytes)
  if (bytes.length === 1 && bytes[0] < 0x80) return 1
  return headerSize(bytes.length) + bytes.length
}

/** Write the header of a payload of `length` bytes with `offset` (0x80 a byte string, 0xc0 a list) at `at`. */
function writeHeader(output, at, length, offset) {
  if (length < 56) {
    output[at] = offset + length
    return at + 1
  }
  const size = lengthOfLength(length)
  output[at] = offset + 55 + size
  for (let index = size; index >= 1; index--) {
    output[at + index] = length % 256
    length = Math.floor(length / 256)
  }
  return at + 1 + size
}

/** RLP.encode for a list: every header and byte string written once into one array. */
function encodeList(list) {
  const parts = []
  const size = measure(list, parts)
  const output = new Uint8Array(size)
  let at = 0
  for (const part of parts) {
    if (typeof part === 'number') {
      at = writeHeader(output, at, -1 - part, 0xc0)
    } else if (part.length === 1 && part[0] < 0x80) {
      output[at++] = part[0]
    } else {
      at = writeHeader(output, at, part.length, 0x80)
      output.set(part, at)
      at += part.length
    }
  }
  return output
}

/** RLP.encode: one-pass for a list, or bytes; anything else, and anything unusual inside a list, by ethereumjs's. */
function onePassEncode(original) {
  return function encode(input) {
    if (Array.isArray(input)) {
      try {
        return encodeList(input)
      } catch (error) {
        if (error !== UNUSUAL) throw error
        return original(input)
      }
    }
    if (!(input instanceof Uint8Array)) return original(input)
    if (input.length === 1 && input[0] < 0x80) return input
    const output = new Uint8Array(headerSize(input.length) + input.length)
    output.set(input, writeHeader(output, 0, input.length, 0x80))
    return output
  }
}

/** The big-endian number in `bytes[start, end)`, which must not start with a zero byte nor exceed 6 bytes. */
function readLength(bytes, start, end) {
  if (end - start > 6 || bytes[start] === 0) throw UNUSUAL
  let length = 0
  for (let index = start; index < end; index++) length = length * 256 + bytes[index]
  return length
}

/**
 * The item encoded at `input[start]`, which must end by `end`; `next[0]` is set to where it ends. Every
 * encoding ethereumjs would refuse is UNUSUAL, and so is every case it reads in a way of its own.
 */
function decodeItem(input, start, end, next) {
  const first = input[start]
  const available = end - start
  if (first <= 0x7f) {
    next[0] = start + 1
    return input.slice(start, start + 1)
  }
  if (first <= 0xb7) {
    const length = first - 0x80
    if (1 + length > available) throw UNUSUAL
    if (length === 1 && input[start + 1] < 0x80) throw UNUSUAL
    next[0] = start + 1 + length
    return length === 0 ? new Uint8Array(0) : input.slice(start + 1, start + 1 + length)
  }
  if (first <= 0xbf) {
    const lengthSize = first - 0xb7
    if (available - 1 < lengthSize + 1) throw UNUSUAL
    const length = readLength(input, start + 1, start + 1 + lengthSize)
    if (length <= 55 || 1 + lengthSize + length > available) throw UNUSUAL
    next[0] = start + 1 + lengthSize + length
    return input.slice(start + 1 + lengthSize, next[0])
  }
  let payloadStart, payloadEnd
  if (first <= 0xf7) {
    payloadStart = start + 1
    payloadEnd = payloadStart + first - 0xc0
    if (payloadEnd > end) throw UNUSUAL
  } else {
    const lengthSize = first - 0xf7
    if (1 + lengthSize > available) throw UNUSUAL
    const length = readLength(input, start + 1, start + 1 + lengthSize)
    if (length < 56 || 1 + lengthSize + length > available) throw UNUSUAL
    payloadStart = start + 1 + lengthSize
    payloadEnd = payloadStart + length
  }
  const items = []
  let at = payloadStart
  while (at < payloadEnd) {
    items.push(decodeItem(input, at, payloadEnd, next))
    at = next[0]
  }
  next[0] = payloadEnd
  return items
}

/** RLP.decode: one pass for bytes; any other input, and every encoding that is not well formed, by ethereumjs's. */
function onePassDecode(original) {
  return function decode(input, stream = false) {
    if (!(input instanceof Uint8Array) || input.length === 0) return original(input, stream)
    try {
      const next = [0]
      const data = decodeItem(input, 0, input.length, next)
      if (stream) return { data, remainder: input.slice(next[0]) }
      if (next[0] !== input.length) throw UNUSUAL
      return data
    } catch (error) {
      if (error !== UNUSUAL) throw error
      return original(input, stream)
    }
  }
}

/** Whether two answers are the same: bytes of the same kind and content, lists item by item, streams part by part. */
function same(a, b) {
  if (a instanceof Uint8Array || b instanceof Uint8Array) {
    // Of the same class, and each its own copy where the other is (a view of the input's memory where the other is).
    const own = (bytes) => bytes.buffer.byteLength === bytes.byteLength
    return (
      a instanceof Uint8Array && b instanceof Uint8Array && a.constructor === b.constructor && own(a) === own(b) &&
      Buffer.compare(a, b) === 0
    )
  }
  if (Array.isArray(a) || Array.isArray(b)) {
    return Array.isArray(a) && Array.isArray(b) && a.length === b.length && a.every((item, index) => same(item, b[index]))
  }
  return same(a.data, b.data) && same(a.remainder, b.remainder)
}

/** Whether `fast` answers as `original` does: the same value, or an error of the same class and message. */
function agrees(fast, original) {
  let expected, failure
  try {
    expected = original()
  } catch (error) {
    failure = error
  }
  try {
    const answer = fast()
    return failure === undefined && same(answer, expected)
  } catch (error) {
    return failure !== undefined && error?.constructor === failure?.constructor && error?.message === failure?.message
  }
}

/** A generator of pseudo-random numbers below `bound`, the same sequence every run. */
function numbers(seed) {
  let state = seed
  return (bound) => {
    state = (state * 1103515245 + 12345) % 2147483648
    return Math.floor((state / 2147483648) * bound) // the high bits: the low ones of this generator cycle
  }
}

/** Items of every kind encode accepts or refuses, nested, with byte strings around every size boundary. */
function testItems(random) {
  const sizes = [0, 1, 2, 31, 32, 54, 55, 56, 57, 255, 256, 1023]
  const scalar = () => {
    switch (random(12)) {
      case 0: return Uint8Array.from({ length: sizes[random(sizes.length)] }, () => random(256))
      case 1: return Uint8Array.of(random(256))
      case 2: return random(3) === 0 ? 0 : random(2 ** 31)
      case 3: return random(3) === 0 ? 0n : BigInt(random(2 ** 31)) ** BigInt(1 + random(4))
      case 4: return `0x${Buffer.from(Uint8Array.from({ length: random(40) }, () => random(256))).toString('hex')}`
      case 5: return `0x${random(4096).toString(16)}`
      case 6: return [null, undefined, -1, 1.5, -3n, 'plain text', '0xzz', '0X12', true, {}, ''][random(11)]
      case 7: return new Uint8Array(0)
      case 8: return Buffer.from([random(256), random(256)])
      default: return Uint8Array.from({ length: random(80) }, () => random(256))
    }
  }
  const item = (depth) => {
    if (depth > 3 || random(3) === 0) return scalar()
    return Array.from({ length: random(depth === 0 ? 12 : 4) }, () => item(depth + 1))
  }
  const items = [[], [[]], [[], [[]]], Array.from({ length: 3000 }, (_, index) => index & 0xff), [new Uint8Array(70_000)]]
  for (let count = 0; count < 120; count++) items.push(count % 5 === 0 ? scalar() : item(0))
  return items
}

/** Encodings of `items` as ethereumjs writes them, then each changed: a byte altered, cut short, extended. */
function testEncodings(items, encode, random) {
  const encodings = []
  for (const item of items) {
    let encoded
    try {
      encoded = encode(item)
    } catch {
      continue
    }
    encodings.push(encoded)
    if (encoded.length === 0) continue
    const altered = encoded.slice()
    altered[random(altered.length)] = random(256)
    encodings.push(altered, encoded.subarray(0, random(encoded.length)), Uint8Array.from([...encoded, random(256)]))
    const header = encoded.slice()
    header[0] = random(256)
    encodings.push(header)
  }
  for (let count = 0; count < 300; count++) encodings.push(Uint8Array.from({ length: 1 + random(12) }, () => random(256)))
  // Long forms ethereumjs refuses: a length with a leading zero, a length short enough for the short form.
  const padded = (...header) => Uint8Array.from([...header, ...new Uint8Array(64).fill(0x01)])
  encodings.push(padded(0xb9, 0x00, 0x40), padded(0xf9, 0x00, 0x40), padded(0xb8, 0x37), padded(0xf8, 0x37), padded(0xb8, 0x38))
  encodings.push(new Uint8Array(0), Uint8Array.of(0x81, 0x00), Uint8Array.of(0x81, 0x80), Uint8Array.of(0xc1), '0xc0', null)
  return encodings
}

/** What the one-pass codec answered differently from ethereumjs's on the generated items, if anything. */
function onePassDisagreement(fastEncode, fastDecode, encode, decode) {
  const random = numbers(7928)
  const items = testItems(random)
  for (const item of items) {
    if (!agrees(() => fastEncode(item), () => encode(item))) return "ethereumjs's: the one-pass encoder disagreed with it"
  }
  for (const encoded of testEncodings(items, encode, random)) {
    for (const stream of [false, true]) {
      if (!agrees(() => fastDecode(encoded, stream), () => decode(encoded, stream))) {
        return "ethereumjs's: the one-pass decoder disagreed with it"
      }
    }
  }
  return undefined
}

/**
 * Replace `RLP.encode` and `RLP.decode` with the one-pass ones if both answer exactly as ethereumjs's do
 * (the same bytes, items or error) on thousands of generated items and encodings; `checkedBefore`: that
 * check passed on these very files and this node before (verify.mjs's START_CHECKS_PASSED), so it is
 * not run again. Returns what ran, for the version record.
 */
export function useOnePassRlp(checkedBefore = false) {
  const { encode, decode } = RLP
  const fastEncode = onePassEncode(encode)
  const fastDecode = onePassDecode(decode)
  const disagreement = checkedBefore ? undefined : onePassDisagreement(fastEncode, fastDecode, encode, decode)
  if (disagreement !== undefined) return disagreement
  RLP.encode = fastEncode
  RLP.decode = fastDecode
  return 'one pass'
}
