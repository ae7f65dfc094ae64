"""Hand-written agent sessions for the recall development set (benchmarks/recall.py --set dev).

Twenty-six conversations over five made-up projects, in both languages and all three log formats, written so
that topics overlap (two "stale value after a deploy" stories, three token/login stories, several decisions
about images, queues and storage): a vague question has a plausible wrong session. ``render()`` writes them as
real agent log files (Claude Code JSONL, Codex CLI rollout JSONL, Gemini CLI JSONL) under
``benchmarks/data/recall_dev_logs/``; the files are committed, this module is how they were made.

    python benchmarks/recall_dev_corpus.py   # rewrite the log files
"""

from __future__ import annotations

import json
import uuid
from datetime import datetime, timedelta, timezone
from pathlib import Path

OUT = Path(__file__).resolve().parent / "data" / "recall_dev_logs"

# (name, platform, project folder, start time, turns); a turn is ("u", text), ("a", text) or
# ("t", tool name, input dict, output text) — a tool call and its result, attached to the assistant turn.
SESSIONS: list[tuple[str, str, str, str, list[tuple]]] = [
    (
        "shopfront-cdn-prices", "claude-code", "shopfront", "2026-03-02T09:10:00Z",
        [
            ("u", "After this morning's release customers on the storefront still see the old prices for product "
                  "pages. The admin panel shows the new prices. Can you figure out why?"),
            ("a", "Let me look at how the product page fetches prices and what headers the response carries."),
            ("t", "Bash", {"command": "curl -sI https://shop.example.com/api/prices?sku=TEE-001"},
             "HTTP/2 200\ncache-control: public, max-age=3600\nx-cache: Hit from cloudfront\nage: 2710"),
            ("a", "The /api/prices route answers with `Cache-Control: public, max-age=3600`, and CloudFront is "
                  "serving a copy that is 45 minutes old (`age: 2710`). The edge keeps the response for an hour "
                  "and nothing purges it when we ship, so the storefront shows the old price until the TTL runs "
                  "out."),
            ("u", "ok so what do we do, we can't have prices wrong for an hour every release"),
            ("a", "Two changes: in app/api/prices/route.ts send `s-maxage=60, stale-while-revalidate=30` instead "
                  "of max-age=3600, so the edge refetches within a minute; and in the GitHub Actions deploy "
                  "workflow add a step that runs `aws cloudfront create-invalidation --paths '/api/prices*'` "
                  "after the new version is live."),
            ("t", "Edit", {"file_path": "app/api/prices/route.ts"},
             "headers: { 'Cache-Control': 'public, s-maxage=60, stale-while-revalidate=30' }"),
            ("u", "do the invalidation step too and keep browsers from caching it"),
            ("a", "Done: browsers get `private, no-store` through a separate header for the HTML, the edge keeps "
                  "s-maxage=60, and .github/workflows/deploy.yml now invalidates /api/prices* after the "
                  "rollout. Next release, prices should switch within a minute."),
            ("u", "great, merged. thanks"),
        ],
    ),
    (
        "ledger-redis-balance", "claude-code", "ledger-api", "2026-03-05T14:20:00Z",
        [
            ("u", "배포하고 나서 잔액 조회 API가 한 시간 넘게 이전 잔액을 돌려주고 있어. DB에는 새 값이 들어가 있는데 왜 그럴까?"),
            ("a", "잔액 조회 경로를 보니 GetBalance가 Redis에 `balance:{accountID}` 키로 결과를 캐싱하고 TTL이 24시간입니다. "
                  "이번 배포에서 잔액 계산 방식(보류 거래 포함)이 바뀌었는데 기존 캐시 키를 그대로 써서 예전 계산 결과가 남아 있습니다."),
            ("t", "Bash", {"command": "redis-cli TTL balance:8812"}, "(integer) 81234"),
            ("u", "그럼 배포할 때마다 FLUSHALL 해야 돼?"),
            ("a", "FLUSHALL은 세션 데이터까지 지우니 위험합니다. 대신 캐시 키에 스키마 버전을 넣어서 `balance:v2:{accountID}`처럼 "
                  "만들면 계산 방식이 바뀔 때 버전만 올리면 됩니다. 그리고 거래가 기록될 때 해당 계정의 키를 DEL 해서 "
                  "쓰기 직후에도 최신 값이 보이게 하겠습니다."),
            ("t", "Edit", {"file_path": "internal/balance/cache.go"},
             "const cacheVersion = \"v2\"\nfunc key(id string) string { return \"balance:\" + cacheVersion + \":\" + id }"),
            ("u", "TTL도 줄여줘. 24시간은 너무 길어"),
            ("a", "TTL을 10분으로 줄였고, PostTransaction 끝에서 키를 지우도록 했습니다. 통합 테스트 "
                  "TestBalanceAfterDeploy를 추가해서 버전이 바뀌면 캐시를 안 쓰는 것도 확인했습니다."),
            ("u", "좋아 이걸로 가자"),
        ],
    ),
    (
        "datapipe-nightly-empty", "codex-cli", "datapipe", "2026-02-16T08:00:00Z",
        [
            ("u", "The finance dashboard has had no new orders since last Monday but the orders_nightly job is green "
                  "every night. Can you check what it's actually doing?"),
            ("a", "I'll read the job logs from the last few runs and the loader script."),
            ("t", "exec_command", {"cmd": "grep -h 'files matched' logs/orders_nightly/*.log | tail -5"},
             "2026-02-12 files matched: 0\n2026-02-13 files matched: 0\n2026-02-14 files matched: 0\n"
             "2026-02-15 files matched: 0\n2026-02-16 files matched: 0"),
            ("a", "Every run since Feb 9 matched 0 files. The upstream export switched its S3 layout from "
                  "`exports/orders/2026-02-09/` to `exports/orders/2026/02/09/`, our glob still uses the dashed "
                  "date, finds nothing, and load_orders() treats an empty list as 'nothing to do' and exits 0."),
            ("u", "ugh. so a whole week of silently skipping. fix it so that can't happen again"),
            ("a", "Changes: the prefix pattern now accepts both layouts; zero input files is an error unless "
                  "`--allow-empty` is passed; and the job posts to #data-alerts when it loads fewer rows than 20% "
                  "of the 7-day average. I backfilled Feb 9–16 with `python -m datapipe.orders --from 2026-02-09`."),
            ("t", "exec_command", {"cmd": "python -m datapipe.orders --from 2026-02-09 --to 2026-02-16"},
             "loaded 8 days, 412,330 rows"),
            ("u", "nice, and add a test for the empty case"),
            ("a", "Added test_zero_files_fails in tests/test_orders.py: an empty prefix now raises NoInputFiles and "
                  "the CLI exits 2."),
        ],
    ),
    (
        "datapipe-dst-schedule", "codex-cli", "datapipe", "2026-03-30T07:30:00Z",
        [
            ("u", "the weekly revenue report showed up an hour late on Monday and the numbers for Sunday were cut "
                  "off. what changed?"),
            ("a", "Sunday was the switch to summer time in Europe. The DAG's schedule is `0 6 * * 1` with "
                  "`start_date` in Europe/Berlin, so Airflow moved the run, and the query's window is computed with "
                  "naive datetimes in UTC, which dropped the last hour of Sunday local time."),
            ("u", "should we just schedule everything in local time then?"),
            ("a", "I'd go the other way: keep every DAG in UTC (`pendulum.datetime(..., tz='UTC')`), compute report "
                  "windows as aware datetimes, and convert to Europe/Berlin only when rendering. Then clock changes "
                  "never move a run, and the window always covers exactly 7×24 hours of local days."),
            ("u", "ok go with UTC everywhere"),
            ("t", "apply_patch", {"file": "dags/weekly_revenue.py"},
             "schedule='0 5 * * 1', start_date=pendulum.datetime(2026, 1, 5, tz='UTC')"),
            ("a", "Updated dags/weekly_revenue.py and the two other report DAGs to UTC, added report_window() with "
                  "zoneinfo, and a test that covers the March and October transitions."),
            ("u", "thanks, rerun last week's report please"),
            ("a", "Rerun done; Sunday's totals now include 23:00–24:00 local."),
        ],
    ),
    (
        "infra-base-image", "claude-code", "infra", "2026-01-20T10:00:00Z",
        [
            ("u", "서비스 도커 이미지들 정리하려고 해. 지금은 다 alpine 기반인데 파이썬 쪽 빌드가 너무 느려. 뭘로 통일하는 게 좋을까?"),
            ("a", "alpine은 musl libc라서 numpy, pandas, cryptography 같은 패키지의 manylinux 휠을 못 쓰고 소스에서 컴파일합니다. "
                  "그래서 빌드가 12분씩 걸립니다. 후보는 python:3.12-slim-bookworm(glibc, 휠 그대로 사용), "
                  "distroless(gcr.io/distroless/python3, 셸 없음), ubuntu 정도입니다."),
            ("t", "Bash", {"command": "docker images --format '{{.Repository}} {{.Size}}' | grep worker"},
             "worker-alpine 412MB\nworker-slim 198MB"),
            ("u", "distroless는 디버깅할 때 셸이 없어서 불편하지 않아?"),
            ("a", "맞습니다. 파이썬 서비스는 운영 중에 셸로 들어가야 할 일이 많아서 slim-bookworm이 낫고, Go 서비스는 정적 바이너리라 "
                  "distroless/static으로 가도 문제가 없습니다. 디버깅은 kubectl debug로 임시 컨테이너를 붙이면 됩니다."),
            ("u", "그럼 파이썬은 slim-bookworm, Go는 distroless static으로 하자. 버전은 고정해줘"),
            ("a", "정리했습니다: 파이썬 서비스는 `python:3.12-slim-bookworm`을 digest로 고정, Go 서비스는 "
                  "`gcr.io/distroless/static-debian12:nonroot`. Renovate가 digest 갱신 PR을 주 1회 올리도록 설정했고, "
                  "워커 이미지는 412MB에서 198MB로 줄고 빌드는 12분에서 3분이 됐습니다."),
            ("u", "굿. README에도 이 결정 적어줘"),
            ("a", "docs/images.md에 선택 이유(musl 휠 문제, 디버깅 셸, 보안 스캔 결과)와 예외 규칙을 적었습니다."),
        ],
    ),
    (
        "infra-cert-staging", "claude-code", "infra", "2026-02-03T01:40:00Z",
        [
            ("u", "스테이징 사이트 들어가면 브라우저가 안전하지 않다고 경고 띄워. 인증서가 만료된 것 같은데 cert-manager 있잖아?"),
            ("t", "Bash", {"command": "kubectl describe certificate staging-tls -n web"},
             "Status: False  Reason: Failed  Message: Issuing certificate as Secret does not exist\n"
             "Events: challenge failed: wrong status code '404', expected '200'"),
            ("a", "cert-manager가 갱신을 시도했지만 HTTP-01 챌린지가 404로 실패했습니다. ClusterIssuer의 solver가 "
                  "`class: nginx`를 쓰는데, 지난달 ingress-nginx 업그레이드 후 IngressClass 이름이 `nginx-internal`로 "
                  "바뀌어서 챌린지 경로를 아무 컨트롤러도 서빙하지 않았습니다."),
            ("u", "아 그 업그레이드 때문이구나. 고쳐줘"),
            ("a", "ClusterIssuer letsencrypt-prod의 solver를 `ingressClassName: nginx-internal`로 바꾸고 실패한 "
                  "CertificateRequest를 지웠습니다. 2분 뒤 새 인증서가 발급되어 만료일이 5월 4일로 바뀌었습니다."),
            ("u", "다음엔 만료 전에 알 수 있게 해줘"),
            ("a", "Prometheus 규칙 CertificateExpiringSoon을 추가했습니다: certmanager_certificate_expiration_timestamp_seconds가 "
                  "14일 이내면 #infra 채널로 경고합니다. 운영 인증서들도 같은 규칙에 걸립니다."),
            ("u", "고마워"),
        ],
    ),
    (
        "shopfront-refresh-race", "claude-code", "shopfront", "2026-02-10T16:00:00Z",
        [
            ("u", "Support says people get kicked back to the sign-in page at random, mostly people who keep several "
                  "tabs open. Can you dig into it?"),
            ("a", "Our refresh tokens rotate: each /auth/refresh call invalidates the previous refresh token. When "
                  "two tabs notice the access token expired at the same moment, both send the same refresh token; "
                  "the first wins, the second gets 401 `refresh_token_reused`, and the client clears the session."),
            ("t", "Grep", {"pattern": "refresh_token_reused", "path": "server/"},
             "server/auth/refresh.ts:41:  throw new AuthError('refresh_token_reused')"),
            ("u", "how do we fix it without giving up rotation"),
            ("a", "Two parts. Client: only one tab refreshes — a BroadcastChannel('auth') lock, the other tabs wait for "
                  "the new token message. Server: accept the just-rotated token for a 30-second grace period and "
                  "return the same new pair, so a race that slips through does not log anyone out."),
            ("u", "sounds right, implement both"),
            ("a", "Implemented: lib/auth/refreshLock.ts with BroadcastChannel and a localStorage fallback for Safari, "
                  "and a grace window in server/auth/refresh.ts keyed by the token family. Playwright test opens "
                  "three tabs, expires the token and checks that none lands on /signin."),
            ("u", "ship it"),
        ],
    ),
    (
        "mobile-token-spinner", "gemini-cli", "mobile-app", "2026-02-12T11:00:00Z",
        [
            ("u", "앱을 오래 켜두고 다시 들어가면 화면이 계속 로딩만 돌아. 토큰 만료랑 관련 있는 것 같아"),
            ("a", "axios 응답 인터셉터를 보면 401이 오면 토큰을 재발급하고 원래 요청을 다시 보내는데, 재발급 요청 자체가 401을 받으면 "
                  "그 요청도 인터셉터를 타서 재발급을 또 시도합니다. 그래서 끝없이 요청이 돌고 스피너가 멈추지 않습니다."),
            ("u", "그럼 어떻게 막아?"),
            ("a", "원래 요청 config에 `_retry` 플래그를 붙여서 한 번만 재시도하고, 재발급 요청은 인터셉터 대상에서 빼겠습니다. "
                  "재발급 중에 들어온 다른 요청은 큐에 넣었다가 새 토큰으로 한꺼번에 다시 보냅니다. 재발급이 실패하면 로그아웃 "
                  "후 로그인 화면으로 보냅니다."),
            ("t", "replace", {"file_path": "src/api/client.ts"}, "if (error.response?.status === 401 && !original._retry) {"),
            ("u", "적용해줘. 테스트도"),
            ("a", "src/api/client.ts에 적용했고 msw로 만료된 토큰 시나리오를 만든 jest 테스트를 추가했습니다. "
                  "재발급 실패 시 로그인 화면으로 이동하는 것도 확인했습니다."),
            ("u", "확인했어 잘 된다"),
        ],
    ),
    (
        "ledger-migration-lock", "claude-code", "ledger-api", "2026-01-28T22:00:00Z",
        [
            ("u", "어젯밤 배포 때 마이그레이션 돌아가는 동안 API가 전부 타임아웃 났어. 원인 좀 찾아줘"),
            ("a", "0042_add_fee_column.up.sql이 `ALTER TABLE transactions ADD COLUMN fee_cents bigint NOT NULL DEFAULT 0`인데, "
                  "운영 DB가 PostgreSQL 10이라 기본값 있는 컬럼 추가가 테이블 전체를 다시 씁니다. 3천만 행을 쓰는 동안 "
                  "ACCESS EXCLUSIVE 락이 잡혀서 모든 조회가 기다렸습니다."),
            ("u", "앞으로 이런 거 어떻게 안전하게 해?"),
            ("a", "규칙을 제안합니다: 1) 컬럼은 NULL 허용으로 먼저 추가, 2) 배치로 값 채우기(1만 행씩), 3) 그다음 NOT NULL 제약, "
                  "4) 인덱스는 CREATE INDEX CONCURRENTLY, 5) 모든 마이그레이션 앞에 `SET lock_timeout = '3s'`를 넣어 락을 못 잡으면 "
                  "바로 실패하게 합니다."),
            ("t", "Write", {"file_path": "migrations/README.md"}, "lock_timeout 3s, expand/contract, CONCURRENTLY"),
            ("u", "도구는 지금 golang-migrate 계속 쓰는 거야?"),
            ("a", "네, golang-migrate는 그대로 두고 CI에 squawk 린터를 추가해서 위험한 DDL(기본값 있는 ADD COLUMN, "
                  "CONCURRENTLY 없는 인덱스)이 있으면 PR이 실패하게 했습니다."),
            ("u", "좋아. 그렇게 하자"),
        ],
    ),
    (
        "ledger-cent-rounding", "claude-code", "ledger-api", "2026-02-20T13:00:00Z",
        [
            ("u", "Finance found monthly statements that are off by one cent against the bank export. Only some "
                  "accounts, only when there are interest postings."),
            ("a", "Interest is computed in internal/interest/accrue.go with float64: `amount * rate / 365`, then "
                  "math.Round at the end. 0.1 and friends are not exact in binary floating point, so some daily "
                  "accruals land at x.xx4999 and round down where the bank rounds up."),
            ("t", "Bash", {"command": "go test ./internal/interest -run TestAccrueKnownCases -v"},
             "--- FAIL: TestAccrueKnownCases/acct_5521 (0.00s) got 1033 want 1034"),
            ("u", "what's the proper fix, use integers?"),
            ("a", "Keep money in integer cents at rest, and do rate math in arbitrary-precision decimal: "
                  "shopspring/decimal with an explicit rounding mode. Finance needs to confirm the mode: half-up "
                  "(what the bank does) or half-even (banker's)."),
            ("u", "finance says match the bank: half up, round once per day"),
            ("a", "Switched accrue.go to decimal.Decimal, rounding half-up to cents once per daily posting; "
                  "the failing known case passes and a property test checks that summing daily postings equals "
                  "the statement total for 10k random accounts."),
            ("u", "perfect"),
        ],
    ),
    (
        "shopfront-hero-image", "claude-code", "shopfront", "2026-01-14T10:30:00Z",
        [
            ("u", "Lighthouse says product pages take over 4 seconds for the largest contentful paint on mobile. "
                  "What is slow?"),
            ("a", "The LCP element is the hero photo: a 2.4 MB JPEG loaded through a plain <img> with no size "
                  "hints, discovered late because it is set from a client component after hydration."),
            ("t", "Bash", {"command": "npx lighthouse https://shop.example.com/p/tee-001 --only-categories=performance"},
             "Largest Contentful Paint 4.1 s\nProperly size images: potential savings 2,180 KiB"),
            ("u", "fix it"),
            ("a", "Moved the hero to the server component and switched to next/image with `priority`, `sizes=\"(max-width: "
                  "768px) 100vw, 50vw\"` and AVIF/WebP enabled in next.config.js. The CDN now serves a 140 KB AVIF "
                  "to phones."),
            ("u", "numbers?"),
            ("a", "LCP on a throttled Moto G profile went from 4.1 s to 1.8 s; CLS stayed at 0.01."),
        ],
    ),
    (
        "datapipe-duplicate-rows", "codex-cli", "datapipe", "2026-03-10T09:00:00Z",
        [
            ("u", "The warehouse has duplicate events for some days, always days where the load job was retried. "
                  "How should we make loads safe to re-run?"),
            ("a", "The loader does a plain INSERT of each batch. A retry after a partial failure inserts the same rows "
                  "again. Options: (a) delete the day's partition then insert, (b) MERGE on a natural key, "
                  "(c) staging table + swap."),
            ("u", "what do you recommend"),
            ("a", "MERGE on (order_id, event_ts): it is safe for late-arriving rows, which delete-then-insert of a "
                  "day would drop when the day spans two files, and it keeps the table queryable during the load. "
                  "Cost is ~15% longer loads."),
            ("u", "ok MERGE it is. also clean the existing dupes"),
            ("t", "exec_command", {"cmd": "bq query --use_legacy_sql=false < sql/dedupe_events.sql"},
             "Number of affected rows: 18211"),
            ("a", "Loader now writes to events_staging then MERGEs into events on (order_id, event_ts); 18,211 duplicate "
                  "rows removed; a test loads the same batch twice and checks the count."),
        ],
    ),
    (
        "infra-worker-oom", "claude-code", "infra", "2026-02-25T03:00:00Z",
        [
            ("u", "리포트 워커 파드가 계속 재시작돼. 로그에는 아무것도 없이 그냥 죽어"),
            ("t", "Bash", {"command": "kubectl get pod report-worker-7d9 -o jsonpath='{.status.containerStatuses[0].lastState}'"},
             "{\"terminated\":{\"exitCode\":137,\"reason\":\"OOMKilled\"}}"),
            ("a", "exit code 137, OOMKilled입니다. 메모리 limit이 512Mi인데 워커가 월말 정산 CSV(1.8GB)를 pandas.read_csv로 "
                  "한 번에 읽습니다. 월말에만 파일이 커서 그때부터 죽기 시작한 겁니다."),
            ("u", "limit 올리면 끝나는 거야?"),
            ("a", "limit만 올리면 다음 달에 또 넘칩니다. read_csv에 chunksize=100_000을 줘서 나눠 읽고 집계를 누적하도록 바꾸면 "
                  "피크 메모리가 300Mi 정도로 떨어집니다. 여유를 두고 requests 512Mi / limits 1Gi로 하겠습니다."),
            ("u", "그렇게 해줘"),
            ("a", "청크 단위 처리로 바꿨고 1.8GB 파일로 돌려 보니 최대 RSS 310Mi였습니다. 매니페스트의 리소스도 수정했습니다."),
        ],
    ),
    (
        "infra-terraform-lock", "claude-code", "infra", "2026-03-12T15:00:00Z",
        [
            ("u", "terraform apply in CI fails with 'Error acquiring the state lock' since someone cancelled a "
                  "pipeline yesterday. What's the safe way out?"),
            ("a", "The cancelled job held the DynamoDB lock and never released it. First make sure nothing is "
                  "running, then `terraform force-unlock <LOCK_ID>` with the ID from the error."),
            ("t", "Bash", {"command": "terraform force-unlock -force 6f1c2a9e-1d2b-4c3d-9e8f-0a1b2c3d4e5f"},
             "Terraform state has been successfully unlocked!"),
            ("u", "how do we stop this happening again"),
            ("a", "Add a GitHub Actions `concurrency: terraform-${{ github.ref }}` group with cancel-in-progress: false "
                  "so applies queue instead of racing, and `-lock-timeout=5m` so a short overlap waits instead of "
                  "failing."),
            ("u", "do it"),
            ("a", "Workflow updated; a second run now waits for the first."),
        ],
    ),
    (
        "mobile-ios-push", "gemini-cli", "mobile-app", "2026-03-03T10:00:00Z",
        [
            ("u", "iOS에서 푸시 알림이 테스트플라이트 빌드에서는 안 오고 Xcode로 설치한 건 잘 와. 뭐가 다른 거지?"),
            ("a", "Xcode 디버그 빌드는 APNs sandbox 환경을 쓰고, TestFlight와 App Store 빌드는 production 환경을 씁니다. "
                  "서버가 디바이스 토큰을 항상 sandbox 게이트웨이로 보내고 있어서 production 토큰은 BadDeviceToken으로 거절됩니다."),
            ("u", "서버 쪽에서 어떻게 구분해?"),
            ("a", "앱이 토큰을 등록할 때 빌드 종류(aps-environment 값)를 같이 보내게 하고, 서버는 그 값에 따라 "
                  "api.sandbox.push.apple.com 또는 api.push.apple.com으로 보내도록 하겠습니다. 기존 토큰은 BadDeviceToken이 "
                  "나오면 반대 환경으로 한 번 더 시도합니다."),
            ("u", "좋아 그렇게 해"),
            ("a", "등록 API에 environment 필드를 추가했고, 테스트플라이트 빌드에서 알림이 오는 것까지 확인했습니다."),
        ],
    ),
    (
        "shopfront-search-engine", "claude-code", "shopfront", "2026-01-07T11:00:00Z",
        [
            ("u", "Product search is bad: typing 'tshirt' finds nothing, 'jeans blu' finds nothing. We use a SQL ILIKE "
                  "right now. What should we move to?"),
            ("a", "Candidates: Postgres full-text search with pg_trgm (no new service, weak typo tolerance), "
                  "Meilisearch (typo tolerance and prefix search out of the box, single binary, small catalog fits in "
                  "RAM), Elasticsearch/OpenSearch (most flexible, heaviest to run)."),
            ("u", "we're three devs and 40k products. opinions?"),
            ("a", "At 40k documents with no search specialist, Meilisearch: one container, typo tolerance by default, "
                  "synonyms file for 'tee'/'t-shirt', and an indexer hook on product updates. Postgres trigram would "
                  "be second choice if we refuse another service."),
            ("u", "let's do meilisearch"),
            ("t", "Write", {"file_path": "docker-compose.yml"}, "meilisearch:\n  image: getmeili/meilisearch:v1.7"),
            ("a", "Added the meilisearch service, a sync job on product save, and synonyms. 'tshirt' and 'jeans blu' "
                  "now return the right products."),
        ],
    ),
    (
        "ledger-payment-429", "claude-code", "ledger-api", "2026-03-18T10:00:00Z",
        [
            ("u", "결제 대행사 API 호출이 점심시간마다 429로 실패해. 재시도는 하는데 오히려 더 심해지는 것 같아"),
            ("a", "지금 재시도가 고정 1초 간격이라 실패한 요청들이 동시에 다시 몰립니다. 대행사 한도는 초당 20건인데 피크 때 우리가 "
                  "초당 35건을 보내고 있습니다."),
            ("u", "어떻게 고치는 게 좋아?"),
            ("a", "보내는 쪽에서 golang.org/x/time/rate로 초당 15건(버스트 5)으로 제한하고, 429가 오면 Retry-After 헤더를 "
                  "따르되 없으면 지수 백오프에 지터를 넣겠습니다. 최대 5번 시도 후 실패하면 큐로 보내 나중에 처리합니다."),
            ("t", "Edit", {"file_path": "internal/psp/client.go"}, "limiter: rate.NewLimiter(rate.Limit(15), 5)"),
            ("u", "진행해"),
            ("a", "적용 후 부하 테스트에서 429가 0건이 됐고 p99 지연은 120ms 늘었습니다."),
        ],
    ),
    (
        "datapipe-alert-digest", "codex-cli", "datapipe", "2026-03-24T09:00:00Z",
        [
            ("u", "the team muted #data-alerts because it posts 200 messages a day. how do we make alerts useful "
                  "again?"),
            ("a", "Most messages are single transient failures that succeed on the automatic retry. I suggest: page "
                  "only when a task fails twice in a row or a freshness SLA is missed; everything else goes into one "
                  "digest at 09:00 with counts per DAG."),
            ("u", "yes, and keep the digest short"),
            ("t", "apply_patch", {"file": "datapipe/alerts.py"}, "def should_page(history): return history[-2:] == ['failed', 'failed']"),
            ("a", "Implemented should_page() and a daily digest task; a backtest over last month's events would have "
                  "sent 9 pages instead of 5,812 messages."),
        ],
    ),
    (
        "infra-ci-build-cache", "claude-code", "infra", "2026-02-06T09:00:00Z",
        [
            ("u", "깃허브 액션에서 이미지 빌드가 매번 20분 넘게 걸려. 줄일 방법 있을까?"),
            ("a", "워크플로를 보면 매 실행마다 docker build를 처음부터 해서 의존성 설치 레이어를 매번 다시 만듭니다. "
                  "docker/build-push-action에 `cache-from: type=gha`와 `cache-to: type=gha,mode=max`를 주면 레이어가 "
                  "액션 캐시에 저장됩니다."),
            ("u", "의존성 파일 안 바뀌면 거의 안 걸리게 되는 거야?"),
            ("a", "네, Dockerfile에서 requirements 복사와 설치를 소스 복사보다 앞에 두면 코드만 바뀐 빌드는 설치 레이어를 그대로 씁니다. "
                  "그 순서도 바꾸겠습니다."),
            ("t", "Edit", {"file_path": ".github/workflows/build.yml"}, "cache-from: type=gha\ncache-to: type=gha,mode=max"),
            ("u", "해줘"),
            ("a", "적용 후 코드만 바뀐 빌드는 6분, 의존성이 바뀐 빌드는 14분이 걸립니다."),
        ],
    ),
    (
        "mobile-android12-crash", "gemini-cli", "mobile-app", "2026-01-22T14:00:00Z",
        [
            ("u", "안드로이드 12 기기에서만 앱 켜자마자 죽어. 11에서는 괜찮아"),
            ("a", "logcat에 `IllegalArgumentException: Targeting S+ (version 31 and above) requires that one of "
                  "FLAG_IMMUTABLE or FLAG_MUTABLE be specified when creating a PendingIntent`가 찍힙니다. targetSdk를 31로 "
                  "올리면서 알림 라이브러리가 만드는 PendingIntent에 플래그가 없어서 생긴 문제입니다."),
            ("u", "우리 코드야 라이브러리야?"),
            ("a", "react-native-push-notification 7.x 내부 코드입니다. 8.1부터 FLAG_IMMUTABLE을 넣으므로 라이브러리를 올리고, "
                  "우리가 직접 만드는 PendingIntent 두 곳에도 플래그를 추가하겠습니다."),
            ("u", "올려줘"),
            ("a", "라이브러리를 8.1.1로 올리고 직접 만든 PendingIntent에 FLAG_IMMUTABLE을 추가했습니다. 안드로이드 12 에뮬레이터에서 "
                  "정상 실행됩니다."),
        ],
    ),
    (
        "shopfront-flaky-e2e", "claude-code", "shopfront", "2026-03-20T10:00:00Z",
        [
            ("u", "The checkout end-to-end tests fail maybe one run in five in CI and never on my laptop. It's "
                  "blocking merges."),
            ("a", "The failing step is 'place order': the test waits for `networkidle` and then clicks, but the "
                  "payment iframe keeps a long-poll open, so networkidle sometimes resolves before the button is "
                  "enabled on the slower CI runners."),
            ("u", "so what do we change"),
            ("a", "Wait for what the user waits for: `await expect(page.getByRole('button', { name: 'Place order' }))."
                  "toBeEnabled()`, drop networkidle everywhere, and set retries: 2 in CI with trace: 'on-first-retry' "
                  "so a real failure leaves a trace to look at."),
            ("t", "Edit", {"file_path": "playwright.config.ts"}, "retries: process.env.CI ? 2 : 0, use: { trace: 'on-first-retry' }"),
            ("u", "ok"),
            ("a", "Ran the suite 30 times in CI: 30/30 green."),
        ],
    ),
    (
        "ledger-log-pii", "claude-code", "ledger-api", "2026-03-26T11:00:00Z",
        [
            ("u", "보안 점검에서 우리 로그에 카드번호 앞자리랑 이메일이 그대로 남는다는 지적을 받았어. 어떻게 막지?"),
            ("a", "요청 본문을 디버그 레벨로 통째로 찍는 미들웨어가 원인입니다. 두 가지를 하겠습니다: 본문 로깅을 끄고, 로거 단계에서 "
                  "민감 필드를 가리는 것. 지금 zap을 쓰는데 Go 1.21의 log/slog로 옮기면 ReplaceAttr 훅으로 키 이름 기준 마스킹을 "
                  "한 곳에서 할 수 있습니다."),
            ("u", "slog로 옮기는 거 부담 크지 않아?"),
            ("a", "호출부가 180곳 정도인데 대부분 logger.Info(msg, fields...) 형태라 기계적으로 바꿀 수 있습니다. zap을 유지하려면 "
                  "Core를 감싸야 하는데 필드 타입마다 처리해야 해서 더 복잡합니다."),
            ("u", "그럼 slog로 가자"),
            ("t", "Edit", {"file_path": "internal/logging/redact.go"}, "ReplaceAttr: func(groups []string, a slog.Attr) slog.Attr {"),
            ("a", "zap에서 slog로 옮겼고 card_number, email, phone, password 키는 마스킹됩니다. 로그 샘플 1만 줄을 정규식으로 "
                  "검사해서 카드번호 패턴이 없는 것을 확인했습니다."),
        ],
    ),
    (
        "datapipe-parquet-contract", "codex-cli", "datapipe", "2026-01-30T10:00:00Z",
        [
            ("u", "customer_sync blew up this morning reading the partner's parquet file: 'ArrowInvalid: Could not "
                  "convert' on zip_code. They changed something again?"),
            ("a", "Yes: zip_code arrived as string today, it was int64 before (leading zeros were being lost on "
                  "their side, so they fixed it). Our reader casts to the old schema and fails on values like "
                  "'02134'."),
            ("u", "this is the third time a partner changed a column on us. what's a sturdier approach"),
            ("a", "Treat each partner feed as a contract: a pydantic model per feed checked at ingest; files that do "
                  "not conform go to a quarantine bucket with a report to the partner channel, and the rest of the "
                  "pipeline only ever sees validated data. zip_code becomes a string in our model."),
            ("u", "agreed, do it"),
            ("a", "Added datapipe/contracts/customer.py, the quarantine path s3://dp-quarantine/, and a check that "
                  "moved today's file there before reprocessing it with the new schema."),
        ],
    ),
    (
        "infra-backup-restore", "claude-code", "infra", "2026-03-06T09:00:00Z",
        [
            ("u", "복구 훈련 해봤는데 운영 DB를 pg_dump 파일로 되살리는 데 6시간 걸렸어. 이거 너무 길지 않아?"),
            ("a", "논리 백업은 복원할 때 인덱스를 전부 다시 만들어서 오래 걸립니다. 물리 백업 도구(pgBackRest, WAL-G, Barman)로 "
                  "바꾸면 베이스 백업 복사 + WAL 재생이라 훨씬 빠르고, 특정 시점 복구도 됩니다."),
            ("u", "셋 중에 뭐가 나아?"),
            ("a", "병렬 복원, 증분 백업, S3 저장소 지원, 문서 수준을 보면 pgBackRest가 우리 규모(800GB)에 가장 무난합니다. "
                  "WAL-G는 가볍지만 복원 검증 기능이 약하고, Barman은 별도 서버가 필요합니다."),
            ("u", "pgBackRest로 가자"),
            ("t", "Bash", {"command": "pgbackrest --stanza=main --delta restore --type=time --target='2026-03-06 08:00'"},
             "INFO: restore command end: completed successfully (2402s)"),
            ("a", "pgBackRest로 전환했고 주 1회 전체 + 매일 증분 + WAL 아카이브입니다. 리허설 복구는 40분이 걸렸습니다."),
        ],
    ),
    (
        "shopfront-i18n-keys", "claude-code", "shopfront", "2026-02-27T10:00:00Z",
        [
            ("u", "On the Korean version of the site the checkout page shows raw keys like checkout.summary.total "
                  "instead of text. English is fine."),
            ("a", "next-intl loads message namespaces per route. The checkout route only imports the 'common' "
                  "namespace for ko; the 'checkout' namespace exists in messages/en but messages/ko/checkout.json was "
                  "never added when the page was built, so the lookups fall back to the key."),
            ("u", "can we catch that in CI rather than users finding it"),
            ("a", "Added messages/ko/checkout.json (translated by the content team's sheet), and a script "
                  "check-messages.ts that fails CI when a key exists in en but not in ko, or the reverse."),
            ("u", "good"),
        ],
    ),
    (
        "mobile-dark-mode", "gemini-cli", "mobile-app", "2026-03-14T10:00:00Z",
        [
            ("u", "다크 모드로 바꾸면 설정 화면 글자가 배경이랑 같은 색이라 안 보여"),
            ("a", "설정 화면 컴포넌트들이 color: '#111' 같은 고정 색을 쓰고 있어서 테마가 바뀌어도 그대로입니다. 배경만 테마를 "
                  "따라 어두워지니 글자가 묻힙니다."),
            ("u", "다른 화면도 그럴 것 같은데"),
            ("a", "고정 색을 쓰는 곳이 47군데입니다. theme.ts에 text/primary/surface 같은 의미 기반 토큰을 만들고 useTheme()로 "
                  "읽게 바꾸겠습니다. eslint 규칙도 넣어서 새 고정 색을 막겠습니다."),
            ("u", "좋아"),
            ("a", "47곳을 토큰으로 바꿨고 라이트/다크 스냅샷 테스트를 추가했습니다."),
        ],
    ),
]


def _iso(ts: datetime) -> str:
    return ts.strftime("%Y-%m-%dT%H:%M:%S.000Z")


def _claude(name: str, project: str, start: datetime, turns: list[tuple]) -> str:
    session = str(uuid.uuid5(uuid.NAMESPACE_URL, "wwt-recall-dev/" + name))
    cwd = f"/home/dev/work/{project}"
    lines, parent, t = [], None, start
    for i, turn in enumerate(turns):
        t += timedelta(seconds=40)
        uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}/{i}"))
        base = {"parentUuid": parent, "isSidechain": False, "userType": "external", "cwd": cwd, "sessionId": session,
                "version": "2.0.14", "gitBranch": "main", "uuid": uid, "timestamp": _iso(t)}
        if turn[0] == "u":
            lines.append({**base, "type": "user", "message": {"role": "user", "content": turn[1]}})
        elif turn[0] == "a":
            lines.append({**base, "type": "assistant", "message": {
                "id": f"msg_{uid[:12]}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "text", "text": turn[1]}], "stop_reason": "end_turn"}})
        else:
            _, tool, args, output = turn
            call_id = f"toolu_{uid[:12]}"
            lines.append({**base, "type": "assistant", "message": {
                "id": f"msg_{uid[:12]}", "type": "message", "role": "assistant", "model": "claude-sonnet-4-5",
                "content": [{"type": "tool_use", "id": call_id, "name": tool, "input": args}], "stop_reason": "tool_use"}})
            parent = uid
            uid = str(uuid.uuid5(uuid.NAMESPACE_URL, f"{session}/{i}/result"))
            t += timedelta(seconds=3)
            lines.append({**base, "parentUuid": parent, "uuid": uid, "timestamp": _iso(t), "type": "user", "message": {
                "role": "user", "content": [{"type": "tool_result", "tool_use_id": call_id, "content": output}]}})
        parent = uid
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def _codex(name: str, project: str, start: datetime, turns: list[tuple]) -> str:
    session = str(uuid.uuid5(uuid.NAMESPACE_URL, "wwt-recall-dev/" + name))
    cwd = f"/home/dev/work/{project}"
    t = start
    lines: list[dict] = [{"timestamp": _iso(t), "type": "session_meta", "payload": {
        "id": session, "timestamp": _iso(t), "cwd": cwd, "originator": "codex_cli_rs", "cli_version": "0.98.0",
        "source": "cli", "model_provider": "openai", "git": {"branch": "main"}}},
        {"timestamp": _iso(t), "type": "turn_context", "payload": {"cwd": cwd, "model": "gpt-5.2-codex"}}]
    for i, turn in enumerate(turns):
        t += timedelta(seconds=40)
        if turn[0] == "u":
            lines.append({"timestamp": _iso(t), "type": "response_item", "payload": {
                "type": "message", "role": "user", "content": [{"type": "input_text", "text": turn[1]}]}})
        elif turn[0] == "a":
            lines.append({"timestamp": _iso(t), "type": "response_item", "payload": {
                "type": "message", "role": "assistant", "content": [{"type": "output_text", "text": turn[1]}]}})
        else:
            _, tool, args, output = turn
            call = f"call_{i:03d}{name[:8]}"
            lines.append({"timestamp": _iso(t), "type": "response_item", "payload": {
                "type": "function_call", "name": tool, "arguments": json.dumps(args), "call_id": call}})
            lines.append({"timestamp": _iso(t + timedelta(seconds=2)), "type": "response_item", "payload": {
                "type": "function_call_output", "call_id": call, "output": output}})
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def _gemini(name: str, project: str, start: datetime, turns: list[tuple]) -> str:
    session = str(uuid.uuid5(uuid.NAMESPACE_URL, "wwt-recall-dev/" + name))
    t = start
    lines: list[dict] = [{"sessionId": session, "projectHash": uuid.uuid5(uuid.NAMESPACE_URL, project).hex * 2,
                          "startTime": _iso(t), "lastUpdated": _iso(t), "kind": "main"}]
    for i, turn in enumerate(turns):
        t += timedelta(seconds=40)
        if turn[0] == "u":
            lines.append({"id": f"u{i}", "timestamp": _iso(t), "type": "user", "content": [{"text": turn[1]}]})
        elif turn[0] == "a":
            lines.append({"id": f"g{i}", "timestamp": _iso(t), "type": "gemini", "content": turn[1],
                          "model": "gemini-3-flash-preview"})
        else:
            _, tool, args, output = turn
            lines.append({"id": f"g{i}", "timestamp": _iso(t), "type": "gemini", "content": "",
                          "model": "gemini-3-flash-preview", "toolCalls": [{
                              "id": f"{tool}-{i}", "name": tool, "args": args, "status": "success",
                              "result": [{"functionResponse": {"id": f"{tool}-{i}", "name": tool,
                                                               "response": {"output": output}}}]}]})
        lines.append({"$set": {"lastUpdated": _iso(t)}})
    return "".join(json.dumps(line, ensure_ascii=False) + "\n" for line in lines)


def render(out: Path = OUT) -> list[Path]:
    """Write every session as a log file of its platform; returns the paths."""
    writers = {"claude-code": _claude, "codex-cli": _codex, "gemini-cli": _gemini}
    written = []
    for name, platform, project, start, turns in SESSIONS:
        when = datetime.strptime(start, "%Y-%m-%dT%H:%M:%SZ").replace(tzinfo=timezone.utc)
        folder = out / platform
        folder.mkdir(parents=True, exist_ok=True)
        if platform == "codex-cli":
            sid = uuid.uuid5(uuid.NAMESPACE_URL, "wwt-recall-dev/" + name)
            path = folder / f"rollout-{when.strftime('%Y-%m-%dT%H-%M-%S')}-{sid}.jsonl"
        elif platform == "gemini-cli":
            path = folder / f"session-{when.strftime('%Y-%m-%dT%H-%M')}-{name}.jsonl"
        else:
            path = folder / f"{name}.jsonl"
        path.write_text(writers[platform](name, project, when, turns), encoding="utf-8")
        written.append(path)
    return written


if __name__ == "__main__":
    for p in render():
        print(p.relative_to(OUT))
