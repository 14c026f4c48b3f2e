// The visible part of a message (MessageDelegate): who wrote it, the collapsible reasoning,
// the answer as Markdown (code blocks apart, with a copy button), the branch switcher ‹ 2/3 ›
// where siblings exist, and actions: copy, edit (user messages: makes a branch), regenerate.
// Its own file so that the delegate can make it asynchronously.
import QtQuick
import QtQuick.Controls
import QtQuick.Layouts
import Arbor

Pane {
    id: card
    objectName: "messageCard"
    required property MessageDelegate message
    padding: 12
    background: Rectangle {
        radius: 10
        color: card.message.isUser ? Qt.rgba(card.palette.highlight.r, card.palette.highlight.g, card.palette.highlight.b, 0.12)
                                   : card.palette.base
        border.color: card.message.messageState === "error" ? "#c0392b" : card.palette.mid
        border.width: 1
    }

    ColumnLayout {
        anchors.left: parent.left
        anchors.right: parent.right
        spacing: 6

        RowLayout {
            Layout.fillWidth: true
            Label {
                text: card.message.isUser ? qsTr("You") : (ChatController.modelName || qsTr("Assistant"))
                font.bold: true
                opacity: 0.8
            }
            Label {
                objectName: "messageStateLabel"
                visible: card.message.messageState !== "complete"
                text: card.message.streaming ? qsTr("writing…") : card.message.messageState === "interrupted" ? qsTr("stopped")
                    : card.message.messageState === "error" ? qsTr("failed") : card.message.messageState
                font.pixelSize: 11
                opacity: 0.7
            }
            Item { Layout.fillWidth: true }
            BranchSwitcher {
                visible: card.message.siblingCount > 1
                row: card.message.sourceRow
                siblingIndex: card.message.siblingIndex
                siblingCount: card.message.siblingCount
            }
        }

        // Made only when there is reasoning.
        Loader {
            id: reasoning
            Layout.fillWidth: true
            active: card.message.reasoningText.length > 0
            visible: active
            sourceComponent: reasoningComponent
        }

        // The body is made asynchronously: opening a long chat never blocks on laying out
        // every visible message in one frame; each one appears as soon as it is ready.
        Loader {
            id: body
            Layout.fillWidth: true
            Layout.preferredHeight: status === Loader.Ready ? implicitHeight : card.message.estimatedBodyHeight
            visible: !card.message.editing
            asynchronous: true
            Component.onCompleted: setSource("MessageBody.qml", { "segments": card.message.segmentModel })
        }

        // Made only while editing.
        Loader {
            id: editor
            Layout.fillWidth: true
            active: card.message.editing
            visible: active
            sourceComponent: editorComponent
        }

        RowLayout {
            Layout.fillWidth: true
            visible: !card.message.editing && !card.message.streaming
            spacing: 2
            ToolButton {
                objectName: "copyButton"
                text: qsTr("Copy")
                font.pixelSize: 12
                Accessible.name: qsTr("Copy the message")
                onClicked: ChatController.copyText(card.message.messageText)
            }
            ToolButton {
                objectName: "editButton"
                visible: card.message.isUser
                enabled: !ChatController.generating && ChatController.modelLoaded
                text: qsTr("Edit")
                font.pixelSize: 12
                Accessible.name: qsTr("Edit the message (makes a branch)")
                onClicked: card.message.startEdit()
            }
            ToolButton {
                objectName: "regenerateButton"
                visible: !card.message.isUser
                enabled: !ChatController.generating && ChatController.modelLoaded
                text: qsTr("Regenerate")
                font.pixelSize: 12
                Accessible.name: qsTr("Regenerate the reply (makes a sibling)")
                onClicked: ChatController.regenerate(card.message.sourceRow)
            }
            Item { Layout.fillWidth: true }
            Label {
                objectName: "messageStats"
                text: card.message.statsText
                font.pixelSize: 11
                opacity: 0.6
                elide: Text.ElideLeft
                Layout.maximumWidth: card.width * 0.6
            }
        }
    }

    Component {
        id: reasoningComponent
        ReasoningBlock {}
    }
    Binding {
        target: reasoning.item
        property: "reasoning"
        value: card.message.reasoningText
        when: reasoning.item !== null
    }
    Binding {
        target: reasoning.item
        property: "streaming"
        value: card.message.streaming && card.message.messageText.length === 0
        when: reasoning.item !== null
    }
    Binding {
        target: body.item
        property: "placeholder"
        value: card.message.streaming && card.message.messageText.length === 0 && card.message.reasoningText.length === 0 ? "…" : ""
        when: body.item !== null
    }
    Component {
        id: editorComponent
        MessageEditor {}
    }
    Binding {
        target: editor.item
        property: "initialText"
        value: card.message.messageText
        when: editor.item !== null
    }
    Connections {
        target: editor.item
        ignoreUnknownSignals: true
        function onAccepted(text) {
            card.message.editing = false
            ChatController.editMessage(card.message.sourceRow, text)
        }
        function onCancelled() {
            card.message.editing = false
        }
    }
}
