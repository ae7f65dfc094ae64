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


def _parse(text: str) -> list[tuple[list[str], list[str]]]:
    pairs = []
    for line in text.splitlines():
        korean, _, english = line.partition("=")
        pairs.append(([w.strip() for w in korean.split(",") if w.strip()],
                      [w.strip().lower() for w in english.split(",") if w.strip()]))
    return pairs


@lru_cache(maxsize=1)
def _tables() -> tuple[dict[str, list[str]], dict[str, list[str]], re.Pattern[str]]:
    ko_to_en: dict[str, list[str]] = {}
    en_to_ko: dict[str, list[str]] = {}
    for korean, english in _parse(_PAIRS):
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
