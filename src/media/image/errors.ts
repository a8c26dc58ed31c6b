/**
 * Why an image got no resized versions. None of these fail an upload: the original is kept and the
 * reason is recorded (spec 7: "a corrupt or tampered image keeps its original without resizing").
 */

/** The bytes are not a well-formed image of the format they claim: the integrity check failed. */
export class CorruptImageError extends Error {
  override readonly name = "CorruptImageError";
}

/** A well-formed image that this worker does not decode (e.g. arithmetic-coded or CMYK JPEG). */
export class UnsupportedImageError extends Error {
  override readonly name = "UnsupportedImageError";
}

/** Decoding would need more memory than an isolate can spare (pixel or coefficient limits). */
export class ImageTooLargeError extends Error {
  override readonly name = "ImageTooLargeError";
}
