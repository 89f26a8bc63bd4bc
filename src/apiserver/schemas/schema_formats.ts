/**
 * The string `format`s kube-apiserver checks in structural schemas (`date-time`,
 * `date`, `byte`, `uuid`, `ipv4`, `ipv6`, `hostname`, `email`, `mac`, `duration`,
 * colors, `bsonobjectid`, …), as kube-openapi's format registry checks them;
 * formats it does not check always match.
 *
 * @module
 */

const DATE_TIME_RE =
  /^(\d{4})-(\d{2})-(\d{2})[Tt ](\d{2}):(\d{2})(?::(\d{2})(?:\.\d+)?)?(?:[Zz]|[+-]\d{2}:?\d{2})?$/;
const DATE_RE = /^(\d{4})-(\d{2})-(\d{2})$/;
const BYTE_RE = /^(?:[A-Za-z0-9+/]{4})*(?:[A-Za-z0-9+/]{2}==|[A-Za-z0-9+/]{3}=)?$/;
const UUID_RE = /^(?:[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}|[0-9a-f]{32})$/i;
const IPV4_RE = /^(?:(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)\.){3}(?:25[0-5]|2[0-4]\d|1\d\d|[1-9]?\d)$/;
const HOSTNAME_LABEL_RE = /^[A-Za-z0-9](?:[-A-Za-z0-9]{0,61}[A-Za-z0-9])?$/;
const EMAIL_RE = /^[^@\s]+@[^@\s]+$/;
const MAC_RE = /^(?:[0-9A-Fa-f]{2}([:-]))(?:[0-9A-Fa-f]{2}\1){4}[0-9A-Fa-f]{2}$/;
const DURATION_RE = /^[-+]?(?:0|(?:\d+(?:\.\d*)?|\.\d+)(?:ns|us|µs|μs|ms|s|m|h))+$/;
const HEX_COLOR_RE = /^#?(?:[0-9a-fA-F]{3}|[0-9a-fA-F]{6})$/;
const RGB_COLOR_RE = /^rgb\(\s*(\d{1,3})\s*,\s*(\d{1,3})\s*,\s*(\d{1,3})\s*\)$/;
const OBJECT_ID_RE = /^[0-9a-fA-F]{24}$/;

/**
 * Whether a string matches a format. Formats kube-apiserver does not check
 * (`int32`, `int64`, `float`, `double`, `password`, `uri`, …) always match.
 */
export function checkFormat(format: string, v: string): boolean {
  switch (format) {
    case "date-time":
    case "datetime": {
      const m = DATE_TIME_RE.exec(v);
      return m !== null && validDate(m[1], m[2], m[3]) && Number(m[4]) < 24 &&
        Number(m[5]) < 60 && (m[6] === undefined || Number(m[6]) <= 60);
    }
    case "date": {
      const m = DATE_RE.exec(v);
      return m !== null && validDate(m[1], m[2], m[3]);
    }
    case "byte":
      return BYTE_RE.test(v);
    case "uuid":
      return UUID_RE.test(v);
    case "uuid3":
    case "uuid4":
    case "uuid5":
      return UUID_RE.test(v) && v.length === 36 && v[14] === format[4];
    case "ipv4":
      return IPV4_RE.test(v);
    case "ipv6":
      return isIPv6(v);
    case "cidr": {
      const slash = v.indexOf("/");
      if (slash < 0) return false;
      const ip = v.slice(0, slash);
      const bits = v.slice(slash + 1);
      if (!/^(?:0|[1-9]\d{0,2})$/.test(bits)) return false;
      if (IPV4_RE.test(ip)) return Number(bits) <= 32;
      return isIPv6(ip) && Number(bits) <= 128;
    }
    case "hostname":
      return v.length <= 253 && v.split(".").every((label) => HOSTNAME_LABEL_RE.test(label));
    case "email":
      return EMAIL_RE.test(v);
    case "mac":
      return MAC_RE.test(v);
    case "duration":
      return DURATION_RE.test(v);
    case "hexcolor":
      return HEX_COLOR_RE.test(v);
    case "rgbcolor": {
      const m = RGB_COLOR_RE.exec(v);
      return m !== null && m.slice(1).every((c) => Number(c) <= 255);
    }
    case "bsonobjectid":
      return OBJECT_ID_RE.test(v);
    default:
      return true;
  }
}

function validDate(y: string | undefined, m: string | undefined, d: string | undefined): boolean {
  const year = Number(y);
  const month = Number(m);
  const day = Number(d);
  if (month < 1 || month > 12 || day < 1) return false;
  const leap = (year % 4 === 0 && year % 100 !== 0) || year % 400 === 0;
  const days = [31, leap ? 29 : 28, 31, 30, 31, 30, 31, 31, 30, 31, 30, 31][month - 1] ?? 0;
  return day <= days;
}

function isIPv6(v: string): boolean {
  if (!v.includes(":") || /[^0-9A-Fa-f:.]/.test(v)) return false;
  try {
    new URL(`http://[${v}]/`);
    return true;
  } catch {
    return false;
  }
}
