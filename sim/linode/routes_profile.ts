/** `profile`: the user behind the token; the CCM's token health check reads it. */
import { json } from "./http.ts";
import type { Route } from "./router.ts";

/** The emulator's one user, shaped like `GET /v4/profile` answers for an unrestricted user. */
const SIM_PROFILE = {
  uid: 1,
  username: "sim-user",
  email: "sim-user@example.com",
  timezone: "US/Eastern",
  email_notifications: true,
  referrals: {
    code: "sim",
    url: "https://www.linode.com/?r=sim",
    total: 0,
    completed: 0,
    pending: 0,
    credit: 0,
  },
  ip_whitelist_enabled: false,
  lish_auth_method: "keys_only",
  authorized_keys: null,
  two_factor_auth: false,
  restricted: false,
  authentication_type: "password",
  verified_phone_number: null,
} as const;

/** Routes under `profile`. */
export const PROFILE_ROUTES: readonly Route[] = [
  { method: "GET", path: "profile", handle: () => json(SIM_PROFILE) },
];
