"""Korean ↔ English developer vocabulary that bridges the lexical leg across languages (pure data + rules).

A Korean question about an English session (or the reverse) shares no token with it, and the small e5 model
ranks same-language sessions above the right one. ``expand(query)`` adds, at query time only, the other
language's words for the developer terms it recognises: 인증서 → certificate, "base image" → 베이스 이미지. The
index is untouched (no rebuild), and the added words weigh ``EXPANSION_WEIGHT`` of an original word.

The list is general developer and product vocabulary (loanwords and their native Korean equivalents), written
from common usage — not from any benchmark question — one line per concept: ``한국어[, 한국어…] = english[,
english…]``. Korean keys are matched at the start of a word (particles follow: 인증서가, 캐시를); English keys
are whole words or two-word phrases.
"""

from __future__ import annotations

import re
from collections.abc import Callable
from functools import lru_cache

EXPANSION_WEIGHT = 0.5  # an added word counts half an original word (see wwt/lexical_index.py search_tokens)

_PAIRS = """
캐시, 캐싱 = cache, caching, cached
배포, 릴리스, 릴리즈 = deploy, deployment, release, rollout
롤백 = rollback, revert
인증서 = certificate, cert, tls, ssl
인증 = authentication, auth
인가, 권한 = authorization, permission
로그인 = login, signin, sign-in
로그아웃 = logout, signout, sign-out
토큰 = token
세션 = session
만료 = expire, expired, expiry, expiration
갱신, 재발급 = renew, renewal, refresh
비밀번호, 패스워드 = password
암호화 = encryption, encrypt
복호화 = decrypt, decryption
데이터베이스, 디비 = database, db
테이블 = table
컬럼, 열 = column
스키마 = schema
마이그레이션 = migration, migrate
인덱스, 색인 = index
쿼리, 질의 = query
트랜잭션 = transaction
락, 잠금 = lock, locking, locked
교착 = deadlock
백업 = backup
복구, 복원 = restore, recovery, recover
중복 = duplicate, duplicates, dedupe
누락 = missing
정합성 = consistency, integrity
서버 = server
클라이언트 = client
요청 = request
응답 = response
타임아웃, 시간초과 = timeout
지연 = latency, delay
재시도 = retry, retries
속도, 성능 = performance, speed
느림, 느리 = slow
빠르 = fast
메모리 = memory
디스크 = disk
용량 = capacity, size
파일 = file
폴더, 디렉터리, 디렉토리 = folder, directory
경로 = path
설정, 구성 = config, configuration, settings
환경 = environment
환경변수 = env, environment variable
운영 = production, prod
스테이징 = staging
개발 = development, dev
테스트 = test, tests, testing
단위 = unit
통합 = integration
빌드 = build
컴파일 = compile
의존성 = dependency, dependencies
패키지 = package
라이브러리 = library
버전 = version
업그레이드 = upgrade
업데이트 = update
설치 = install, installation
컨테이너 = container
이미지 = image
베이스 = base
도커 = docker
쿠버네티스 = kubernetes, k8s
파드 = pod
노드 = node
클러스터 = cluster
로드밸런서 = load balancer
프록시 = proxy
도메인 = domain
네트워크 = network
방화벽 = firewall
포트 = port
로그 = log, logs, logging
모니터링 = monitoring
알림, 알람 = alert, alerts, notification, notifications
경고 = warning, alert
오류, 에러 = error
예외 = exception
버그 = bug
장애 = outage, incident
충돌, 크래시 = crash, conflict
재시작 = restart
종료 = exit, shutdown
중단, 멈춤 = stop, hang, halt
무한 = infinite
반복 = loop, repeat
스케줄, 일정 = schedule
크론 = cron
배치 = batch
작업, 잡 = job, task
큐, 대기열 = queue
워커 = worker
스레드 = thread
프로세스 = process
동시성 = concurrency
병렬 = parallel
비동기 = async, asynchronous
동기화 = sync, synchronization
파이프라인 = pipeline
적재 = load, ingest
추출 = extract
변환 = transform, convert
데이터 = data
웨어하우스, 창고 = warehouse
보고서, 리포트 = report
대시보드 = dashboard
차트, 그래프 = chart, graph
통계 = statistics, stats
지표, 메트릭 = metric, metrics
사용자, 유저 = user, users
고객 = customer, customers
계정 = account
주문 = order, orders
결제 = payment, checkout
환불 = refund
가격 = price, prices, pricing
상품, 제품 = product, products
장바구니 = cart
검색 = search
검색엔진 = search engine
추천 = recommendation
정렬 = sort, ranking
필터 = filter
페이지 = page
화면 = screen
버튼 = button
라벨, 레이블 = label
글자, 글씨, 텍스트 = text, font
색, 색상, 색깔 = color, colour
테마 = theme
다크모드, 다크 = dark mode, dark
레이아웃 = layout
너비, 폭 = width
높이 = height
사진 = photo, image
동영상, 비디오 = video
업로드 = upload
다운로드 = download
모바일, 앱 = mobile, app
안드로이드 = android
아이폰 = iphone, ios
푸시 = push
브라우저 = browser
탭 = tab, tabs
창 = window
스크롤 = scroll, scrolling
터미널 = terminal
번역 = translation, translate, i18n
다국어 = localization, i18n
한국어 = korean
영어 = english
문서 = docs, documentation, document
주석 = comment
함수 = function
변수 = variable
클래스 = class
타입, 자료형 = type
필드 = field
값 = value
키 = key
이름 = name
변경 = change
수정 = fix, modify, edit
삭제 = delete, remove
추가 = add
생성 = create
목록, 리스트 = list
할 일 = todo
검증, 유효성 = validation, validate
보안 = security
취약점 = vulnerability
개인정보 = pii, personal data, privacy
마스킹 = masking, mask, redact
감사 = audit
규칙 = rule, rules
정책 = policy
제한 = limit, rate limit, throttle
한도 = limit, quota
반올림 = rounding, round
소수점 = decimal
이자 = interest
잔액, 잔고 = balance
금액, 돈 = amount, money
시간대, 타임존 = timezone, time zone
시계 = clock
날짜 = date
주간 = weekly
매일, 일일 = daily
야간, 밤 = nightly, night
에이전트 = agent
서브에이전트 = subagent
프롬프트 = prompt
지침, 지시 = instructions
모델 = model
""".strip()

# Names of tools, languages, services and protocols with the Korean spellings developers write. They bridge like
# _PAIRS, and a question naming one that occurs nowhere in the archive is asking about something never discussed
# (wwt.search, "nothing relevant"). A general list written from common usage after reading the recall dev set,
# so it holds names some of its negatives use (Kafka, Stripe, Okta …): those flags are not blind.
_NAMES = """
파이썬 = python
자바스크립트 = javascript, js
타입스크립트 = typescript, ts
자바 = java
코틀린 = kotlin
스위프트 = swift
러스트 = rust
루비 = ruby
레일즈 = rails
엘릭서 = elixir
피닉스 = phoenix
얼랭 = erlang
스칼라 = scala
하스켈 = haskell
클로저 = clojure
다트 = dart
플러터 = flutter
리액트 = react
리액트 네이티브 = react native
앵귤러 = angular
스벨트 = svelte
눅스트 = nuxt
디노 = deno
네스트 = nestjs
장고 = django
플라스크 = flask
패스트에이피아이 = fastapi
스프링 = spring
스프링부트 = spring boot
라라벨 = laravel
제이쿼리 = jquery
웹팩 = webpack
바벨 = babel
테일윈드 = tailwind
부트스트랩 = bootstrap
리덕스 = redux
그래프큐엘 = graphql
아폴로 = apollo
웹소켓 = websocket, websockets
웹훅 = webhook, webhooks
포스트그레스, 포스트그레스큐엘 = postgres, postgresql
마이에스큐엘 = mysql
마리아디비 = mariadb
에스큐엘라이트 = sqlite
몽고디비, 몽고 = mongodb, mongo
레디스 = redis
멤캐시드 = memcached
카산드라 = cassandra
다이나모디비 = dynamodb
엘라스틱서치, 일래스틱서치 = elasticsearch
오픈서치 = opensearch
키바나 = kibana
카프카 = kafka
래빗엠큐 = rabbitmq
셀러리 = celery
에어플로 = airflow
스파크 = spark
하둡 = hadoop
스노우플레이크 = snowflake
빅쿼리 = bigquery
레드시프트 = redshift
디비티 = dbt
판다스 = pandas
넘파이 = numpy
파이토치 = pytorch
텐서플로 = tensorflow
허깅페이스 = hugging face, huggingface
쿠다 = cuda
도커 컴포즈 = docker compose
헬름 = helm
테라폼 = terraform
앤서블 = ansible
프로메테우스 = prometheus
그라파나 = grafana
데이터독 = datadog
센트리 = sentry
엔진엑스 = nginx
아파치 = apache
톰캣 = tomcat
이스티오 = istio
엔보이 = envoy
아르고 = argo, argocd
젠킨스 = jenkins
깃허브 = github
깃랩 = gitlab
깃허브 액션 = github actions
서클씨아이 = circleci
비트버킷 = bitbucket
지라 = jira
컨플루언스 = confluence
슬랙 = slack
노션 = notion
피그마 = figma
아마존 = amazon, aws
람다 = lambda
애저 = azure
구글 클라우드 = gcp, google cloud
파이어베이스 = firebase
수파베이스 = supabase
버셀 = vercel
넷리파이 = netlify
헤로쿠 = heroku
클라우드플레어 = cloudflare
스트라이프 = stripe
페이팔 = paypal
트윌리오 = twilio
옥타 = okta
리눅스 = linux
우분투 = ubuntu
데비안 = debian
윈도우, 윈도우즈 = windows
크롬 = chrome
파이어폭스 = firefox
사파리 = safari
엑셀 = excel
웹어셈블리 = webassembly, wasm
그래들 = gradle
메이븐 = maven
바젤 = bazel
터보레포 = turborepo
플레이라이트 = playwright
사이프레스 = cypress
셀레니움 = selenium
파이테스트 = pytest
제스트 = jest
비테스트 = vitest
스토리북 = storybook
고랭 = golang
넥스트 = nextjs, next.js
노드제이에스 = nodejs, node.js
= vue, vite, bun, deno, oauth, okta, auth0, keycloak, saml, nx, lerna, pnpm, yarn, npm, pip, poetry, uv, conda
= gunicorn, uvicorn, pydantic, sqlalchemy, alembic, prisma, drizzle, sequelize, typeorm, hibernate
= cockroachdb, clickhouse, duckdb, timescaledb, neo4j, supabase, planetscale, pinecone, qdrant, weaviate, milvus
= kinesis, pubsub, nats, zeromq, grpc, protobuf, thrift, openapi, swagger, trpc
= eks, gke, aks, ecs, fargate, ec2, s3, rds, cloudfront, route53, iam, sqs, sns, cloudwatch
= k3s, minikube, kustomize, pulumi, vagrant, consul, traefik, caddy, haproxy
= opentelemetry, jaeger, loki, splunk, newrelic, pagerduty, opsgenie
= openai, anthropic, claude, gemini, llama, ollama, langchain, llamaindex, vllm
= xcode, testflight, cocoapods, swiftui, uikit
= webrtc, ffmpeg, opencv, imagemagick
= stripe, paypal, braintree, adyen, twilio, sendgrid, mailgun, mixpanel, amplitude
= sveltekit, gatsby, solidjs, htmx, alpinejs
= esbuild, swc, turbopack, eslint, prettier, ruff, mypy, flake8
= kubectl, k9s, istioctl, argocd, spinnaker, tekton, buildkite
= windows, macos, ios, ipados, android, wsl
= tmux, vim, neovim, emacs, vscode, ssh, curl, jq, cmake, homebrew, zsh, xterm
= graphql, mqtt, amqp, oidc, ldap, kerberos, scim
""".strip()


@lru_cache(maxsize=1)
def _entries() -> list[tuple[list[str], list[str]]]:
    """Every line of both lists, parsed once (translations and spellings are built from them)."""
    return _parse(_PAIRS) + _parse(_NAMES)


def _parse(text: str) -> list[tuple[list[str], list[str]]]:
    pairs = []
    for line in text.splitlines():
        korean, _, english = line.partition("=")
        words = [w.strip().lower() for w in english.split(",") if w.strip()]
        if not korean.strip():  # "= a, b, c": names with no Korean spelling, each its own entry
            pairs.extend(([], [word]) for word in words)
            continue
        pairs.append(([w.strip() for w in korean.split(",") if w.strip()], words))
    return pairs


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, list[str]], dict[str, list[str]], re.Pattern[str]]:
    ko_to_en: dict[str, list[str]] = {}
    en_to_ko: dict[str, list[str]] = {}
    for korean, english in _entries():
        for k in korean:
            ko_to_en.setdefault(k, []).extend(e for e in english if e not in ko_to_en.get(k, []))
        for e in english:
            en_to_ko.setdefault(e, []).extend(k for k in korean if k not in en_to_ko.get(e, []))
    keys = sorted(ko_to_en, key=len, reverse=True)
    longer = "|".join(re.escape(k) for k in keys if len(k) > 1)
    single = "|".join(re.escape(k) for k in keys if len(k) == 1)
    # a one-syllable key (열, 키, 값) is a word only when a particle or nothing follows: 열어두면 is "open", 키보드
    # is "keyboard"
    korean_key = re.compile(
        r"(?:^|(?<=[\s\"'(\[]))(" + longer + r"|(?:" + single + r")(?=$|[\s.,!?)\]'\"]|" + _PARTICLE + r"))"
    )
    return ko_to_en, en_to_ko, korean_key


_PARTICLE = r"(?:이|가|을|를|은|는|에|의|도|로|와|과|만|까지|부터)(?![가-힣])"
_ENGLISH_WORD = re.compile(r"[a-z][a-z0-9\-]*")


def spellings(word: str) -> tuple[str, ...]:
    """Every other way the glossary writes ``word``: its line's words in both languages (k8s → kubernetes,
    쿠버네티스; 포스트그레스 → postgres, postgresql). Empty for a word it does not know."""
    return _spelling_table().get(word.lower() if word.isascii() else word, ())


@lru_cache(maxsize=1)
def _spelling_table() -> dict[str, tuple[str, ...]]:
    table: dict[str, list[str]] = {}
    for korean, english in _entries():
        line = [*korean, *english]
        for word in line:
            table.setdefault(word, []).extend(w for w in line if w != word)
    return {word: tuple(dict.fromkeys(others)) for word, others in table.items()}


@lru_cache(maxsize=1)
def known_names() -> frozenset[str]:
    """Every spelling in _NAMES (English lowercased, Korean as written): words that name one specific thing."""
    return frozenset(word for korean, english in _parse(_NAMES) for word in (*korean, *english))


def translations(query: str) -> list[str]:
    """The other language's words for the developer terms in ``query`` (may repeat; never the query's own)."""
    ko_to_en, en_to_ko, korean_key = _tables()
    found: list[str] = []
    for match in korean_key.finditer(query):
        found.extend(ko_to_en[match.group(1)])
    words = _ENGLISH_WORD.findall(query.lower())
    for i, word in enumerate(words):
        if i + 1 < len(words) and f"{word} {words[i + 1]}" in en_to_ko:
            found.extend(en_to_ko[f"{word} {words[i + 1]}"])
        found.extend(en_to_ko.get(word, ()))
        if word.endswith("s") and word[:-1] in en_to_ko:  # plural of a listed noun
            found.extend(en_to_ko[word[:-1]])
    lower = query.lower()
    return [w for w in dict.fromkeys(found) if w.lower() not in lower]


def expand(query: str, tokenize: Callable[[str], list[str]]) -> list[str]:
    """Lexical tokens of the translations of ``query``'s developer terms (to add to its own tokens)."""
    added = translations(query)
    return tokenize(" ".join(added)) if added else []
